package repo

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// owners lists, for each guarded import path prefix, the directories (relative
// to the module root, as prefixes) whose non-test files may import it.
var owners = []struct {
	imp     string
	allowed []string
	why     string
}{
	{"github.com/go-mysql-org/go-mysql/", []string{"internal/binlog", "test/bench"},
		"internal/binlog is the only reader of the replication protocol; test/bench measures go-mysql's raw limits"},
	{"github.com/twmb/franz-go/pkg/kfake", []string{"internal/devenv", "test/kfakeserver", "test/harness"},
		"the in-process fake broker is for tests, the demo and the benchmark"},
	{"github.com/twmb/franz-go/", []string{"cmd/", "internal/checkpoint", "internal/config", "internal/devenv",
		"internal/acl", "internal/cetest", "internal/inboxtest", "internal/logging", "internal/metrics", "internal/pipeline", "internal/relay", "internal/replay", "internal/recovery", "internal/route",
		"internal/kafka", "internal/validate", "inbox", "examples/", "test/"},
		"binlog decoding, GTID sets, the outbox schema and the public writer know nothing of Kafka"},
	{"github.com/santhosh-tekuri/jsonschema/", []string{"internal/contract"},
		"one package compiles and checks the payload contracts"},
	{"database/sql", []string{"internal/binlog", "internal/checkpoint", "internal/devenv", "internal/inboxtest", "internal/schema",
		"internal/validate", "internal/prune", "internal/recovery", "outbox", "inbox", "examples/", "test/"},
		"SQL access is confined to the packages that inspect or write the database"},
	{"github.com/go-sql-driver/mysql", []string{"internal/binlog", "internal/devenv", "internal/validate", "internal/prune",
		"inbox", "examples/", "test/"},
		"the MySQL driver is registered by the packages that open connections"},
	{"k8s.io/", nil, "the Kubernetes types check the manifests in docker/ and are for tests only"},
	{"sigs.k8s.io/", nil, "the Kubernetes types check the manifests in docker/ and are for tests only"},
	{"github.com/prometheus-operator/", nil, "the ServiceMonitor type checks the manifests in docker/ and is for tests only"},
}

func TestImportRules(t *testing.T) {
	root := moduleRoot(t)
	var violations []string
	err := walkSources(root, func(path, rel string) error {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			for _, o := range owners {
				if imp != o.imp && !strings.HasPrefix(imp, o.imp) {
					continue
				}
				if !allowedIn(dir, o.allowed) {
					violations = append(violations, rel+" imports "+imp+": "+o.why)
				}
				break // the first matching rule decides
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
}

// module is the import path of the module's own packages.
const module = "github.com/binlog-router/binlog-router/"

// layers places each package of the router: a package imports only
// packages of lower layers, so imports go down from the command to the
// protocol. The public libraries stand apart: outbox shares the outbox
// table's column contract (internal/schema) and inbox nothing. test/ and
// examples/ may import anything. A package missing here fails the test:
// give a new package its layer.
var layers = map[string]int{
	"internal/acl":                   0,
	"internal/gtid":                  0,
	"internal/schema":                0,
	"internal/logging":               0,
	"internal/metrics":               0,
	"internal/devenv":                0,
	"internal/cetest":                0,
	"internal/inboxtest":             1, // above internal/devenv; tests only
	"internal/repo":                  0,
	"internal/jsonscan":              0,
	"internal/binlog":                1,
	"internal/contract":              1,
	"internal/route":                 2,
	"internal/checkpoint":            2,
	"internal/kafka":                 3,
	"internal/prune":                 3,
	"internal/pipeline":              4,
	"internal/pipeline/pipelinetest": 4, // tests only: the fakes of the loop's and the relay's tests
	"internal/relay":                 5,
	"internal/recovery":              5,
	"internal/replay":                5,
	"internal/validate":              5,
	"internal/config":                6,
	"cmd/binlog-router":              7,
	"outbox":                         1, // above internal/schema only
	"inbox":                          0,
	"deploy":                         0, // the alerting rules and dashboard, embedded
}

func TestImportsGoDown(t *testing.T) {
	root := moduleRoot(t)
	var violations []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" ||
				rel == "test" || rel == "examples" || rel == "docker") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		layer, ok := layers[dir]
		if !ok {
			violations = append(violations, dir+" has no layer in internal/repo's layers")
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if depLayer, known := layers[dep]; !known || depLayer >= layer {
				violations = append(violations, fmt.Sprintf("%s (layer %d) imports %s (layer %d): imports go down", rel, layer, dep, depLayer))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(violations)
	for _, v := range slices.Compact(violations) {
		t.Error(v)
	}
}

// walkSources calls fn for every non-test Go file below root (path, and
// rel relative to root), skipping hidden, testdata and vendor folders.
func walkSources(root string, fn func(path, rel string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		return fn(path, rel)
	})
}

func allowedIn(dir string, allowed []string) bool {
	for _, a := range allowed {
		if dir == strings.TrimSuffix(a, "/") || strings.HasPrefix(dir, strings.TrimSuffix(a, "/")+"/") {
			return true
		}
	}
	return false
}

func TestImportRuleCatchesViolation(t *testing.T) {
	if allowedIn("internal/route", []string{"internal/binlog", "test/bench"}) {
		t.Fatal("internal/route allowed to import go-mysql")
	}
	if !allowedIn("test/bench", []string{"internal/binlog", "test/bench"}) || !allowedIn("cmd/binlog-router", []string{"cmd/"}) {
		t.Fatal("owner refused")
	}
	if allowedIn("internal/binlogx", []string{"internal/binlog"}) {
		t.Fatal("a prefix of a directory name matched")
	}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

package repo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// clientMakers may call kgo.NewClient in non-test files: the router's
// Kafka room, the inbox consumer library (which stands apart from the
// router), the test environment and the inbox tests' helpers, the demo and
// benchmark programs, and the examples.
var clientMakers = []string{"internal/kafka", "inbox", "internal/devenv", "internal/inboxtest", "test/", "examples/"}

// TestKafkaClientsInOnePackage: every Kafka client of the router is made
// in internal/kafka (kafka.NewClient, kafka.NewAdmin, or its own types),
// so its connection options, logging and error hints are in one place.
func TestKafkaClientsInOnePackage(t *testing.T) {
	root := moduleRoot(t)
	err := walkSources(root, func(path, rel string) error {
		if allowedIn(filepath.ToSlash(filepath.Dir(rel)), clientMakers) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, at := range kgoNewClientCalls(f) {
			t.Errorf("%s:%d calls kgo.NewClient: make Kafka clients with internal/kafka (kafka.NewClient, kafka.NewAdmin)", rel, fset.Position(at).Line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// kgoNewClientCalls returns where f calls NewClient of franz-go's kgo,
// under whatever name f imports it.
func kgoNewClientCalls(f *ast.File) []token.Pos {
	name := ""
	for _, spec := range f.Imports {
		if strings.Trim(spec.Path.Value, `"`) == "github.com/twmb/franz-go/pkg/kgo" {
			name = "kgo"
			if spec.Name != nil {
				name = spec.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var at []token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewClient" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				at = append(at, sel.Pos())
			}
		}
		return true
	})
	return at
}

func TestKafkaClientRuleCatchesACall(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", `package x
import franz "github.com/twmb/franz-go/pkg/kgo"
func f() { _, _ = franz.NewClient() }
`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(kgoNewClientCalls(f)); n != 1 {
		t.Fatalf("found %d calls, want 1", n)
	}
}

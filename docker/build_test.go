package docker_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the build context of docker/Dockerfile, as compose.yaml's
// build.context "..", seen from this directory.
const repoRoot = ".."

// buildTimeout bounds the go build of the router: a cold build of every
// dependency takes about a minute on two cores.
const buildTimeout = 6 * time.Minute

// testVersion is passed as the VERSION build argument.
const testVersion = "docker-test-1.2.3"

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

func readDockerfile(t *testing.T) []instruction {
	t.Helper()
	f, err := os.Open("Dockerfile")
	require.NoError(t, err)
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(cont)
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.Join(strings.Fields(args), " ")})
		cur.Reset()
	}
	require.NoError(t, sc.Err())
	return out
}

func find(ins []instruction, cmd string) []string {
	var out []string
	for _, in := range ins {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// buildCommand is the go build of the Dockerfile, as the brief for the
// image and `make build` have it.
const buildCommand = `CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o /out/binlog-router ./cmd/binlog-router`

func TestDockerfileStages(t *testing.T) {
	ins := readDockerfile(t)
	from := find(ins, "FROM")
	require.Len(t, from, 3, "the prebuilt target, a builder stage and the final stage")
	assert.Equal(t, "${BASE} AS prebuilt", from[0])
	assert.Regexp(t, `^(--platform=\S+ )?golang:1\.26 AS build$`, from[1])
	assert.Equal(t, "${BASE}", from[2], "the final stage (the default target) is on BASE")
	assert.Contains(t, find(ins, "ARG"), "BASE=gcr.io/distroless/static-debian12:nonroot")

	var build []string
	for _, r := range find(ins, "RUN") {
		if strings.Contains(r, "go build") {
			build = append(build, r)
		}
	}
	require.Len(t, build, 1)
	assert.Contains(t, build[0], buildCommand)
	assert.Contains(t, find(ins, "COPY"), "--from=build /out/binlog-router /binlog-router")
	assert.Contains(t, find(ins, "COPY"), "bin/binlog-router /binlog-router", "the prebuilt target copies the binary of `make build`")
	// Both targets end the same way.
	assert.Equal(t, []string{"nonroot:nonroot", "nonroot:nonroot"}, find(ins, "USER"))
	assert.Equal(t, []string{"9090", "9090"}, find(ins, "EXPOSE"))
	assert.Equal(t, []string{"BINLOG_ROUTER_METRICS_ADDR=:9090", "BINLOG_ROUTER_METRICS_ADDR=:9090"}, find(ins, "ENV"))
	assert.Equal(t, []string{`["/binlog-router"]`, `["/binlog-router"]`}, find(ins, "ENTRYPOINT"))
	assert.Equal(t, []string{`["run"]`, `["run"]`}, find(ins, "CMD"))
	assert.Contains(t, find(ins, "ARG"), "VERSION=dev")
}

// TestDockerfileBuild runs the Dockerfile's go build command, as the image
// build would, in a copy of the build context filtered by
// Dockerfile.dockerignore, and runs the binary it makes.
func TestDockerfileBuild(t *testing.T) {
	bin := routerBinary(t)
	out, err := exec.Command(bin, "version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "binlog-router "+testVersion+"\n", string(out))

	if runtime.GOOS == "linux" {
		// distroless/static has no libc: the binary must not need a dynamic loader.
		f, err := elf.Open(bin)
		require.NoError(t, err)
		defer f.Close()
		for _, p := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, p.Type, "binary has an ELF interpreter: not static")
		}
		libs, err := f.ImportedLibraries()
		require.NoError(t, err)
		assert.Empty(t, libs)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

var built struct {
	once sync.Once
	dir  string
	bin  string
	out  []byte
	err  error
}

// routerBinary builds the router once per test binary, with the
// Dockerfile's command, and returns its path.
func routerBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "binlog-router-docker-test-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.bin, built.out, built.err = buildLikeDocker(t, dir)
	})
	require.NoError(t, built.err, "%s", built.out)
	return built.bin
}

// buildLikeDocker stages the build context in dir/context and runs the
// Dockerfile's go build RUN in it with the build arguments set, writing to
// dir/out instead of /out.
func buildLikeDocker(t *testing.T, dir string) (bin string, out []byte, err error) {
	var run string
	for _, r := range find(readDockerfile(t), "RUN") {
		if strings.Contains(r, "go build") {
			run = r
		}
	}
	if run == "" {
		return "", nil, errors.New("docker/Dockerfile has no RUN with go build")
	}
	// BuildKit options of RUN are not part of the shell command.
	run = regexp.MustCompile(`--mount=\S+\s+`).ReplaceAllString(run, "")
	ctxDir, outDir := filepath.Join(dir, "context"), filepath.Join(dir, "out")
	if err := stageContext(ctxDir); err != nil {
		return "", nil, err
	}
	run = strings.ReplaceAll(run, "/out/", outDir+"/")
	// A deadline, so that a go command stuck on a module cache lock fails
	// the test with its output instead of hanging until the test timeout.
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", run)
	cmd.WaitDelay = 5 * time.Second
	cmd.Dir = ctxDir
	cmd.Env = append(os.Environ(), "VERSION="+testVersion, "TARGETOS="+runtime.GOOS, "TARGETARCH="+runtime.GOARCH)
	out, err = cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("go build did not finish in %s: %w", buildTimeout, err)
	}
	return filepath.Join(outDir, "binlog-router"), append([]byte(run+"\n"), out...), err
}

// ignoreRule is one line of a .dockerignore file.
type ignoreRule struct {
	pattern string // slash separated, without a trailing slash
	negate  bool
}

func readIgnore(name string) ([]ignoreRule, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var rules []ignoreRule
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if p, ok := strings.CutPrefix(line, "!"); ok {
			r.negate, line = true, p
		}
		r.pattern = strings.TrimSuffix(line, "/")
		rules = append(rules, r)
	}
	return rules, nil
}

// ignored applies the rules as Docker does for the patterns this
// directory uses: the last rule that matches the path or one of its
// parent directories decides. "**/" is supported as a prefix only.
func ignored(rules []ignoreRule, rel string) bool {
	parts := strings.Split(rel, "/")
	match := func(pattern string) bool {
		for i := 1; i <= len(parts); i++ {
			p := strings.Join(parts[:i], "/")
			if sub, ok := strings.CutPrefix(pattern, "**/"); ok {
				for j := 0; j < i; j++ {
					if m, _ := path.Match(sub, strings.Join(parts[j:i], "/")); m {
						return true
					}
				}
			} else if m, _ := path.Match(pattern, p); m {
				return true
			}
		}
		return false
	}
	ign := false
	for _, r := range rules {
		if match(r.pattern) {
			ign = !r.negate
		}
	}
	return ign
}

// stageContext copies the repository files that Dockerfile.dockerignore
// lets into the build context to dst.
func stageContext(dst string) error {
	rules, err := readIgnore("Dockerfile.dockerignore")
	if err != nil {
		return err
	}
	for _, r := range rules {
		if strings.Contains(strings.TrimPrefix(r.pattern, "**/"), "**") {
			return fmt.Errorf("Dockerfile.dockerignore: pattern %q: ignored() supports ** only as a leading **/; extend it", r.pattern)
		}
	}
	return filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repoRoot, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if ignored(rules, rel) {
			return nil
		}
		return copyFile(p, filepath.Join(dst, filepath.FromSlash(rel)))
	})
}

func copyFile(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func TestDockerignoreRules(t *testing.T) {
	rules, err := readIgnore("Dockerfile.dockerignore")
	require.NoError(t, err)
	for rel, want := range map[string]bool{
		"go.mod":                            false,
		"cmd/binlog-router/main.go":         false,
		"internal/route/router.go":          false,
		"internal/route/router_test.go":     true,
		"internal/route/testdata/fuzz/x":    true,
		"docker/Dockerfile":                 true,
		"test/delivery_e2e_test.go":         true,
		"bin/binlog-router":                 true,
		".git/config":                       true,
		"outbox/writer.go":                  true,
		"cmd/binlog-router/testdata/a.json": true,
	} {
		assert.Equal(t, want, ignored(rules, rel), rel)
	}
}

// runFlags returns the flag names `binlog-router run -h` lists.
func runFlags(t *testing.T) map[string]bool {
	t.Helper()
	out, _ := exec.Command(routerBinary(t), "run", "-h").CombinedOutput() // -h exits non-zero in some flag packages
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllSubmatch(out, -1) {
		flags[string(m[1])] = true
	}
	require.Greater(t, len(flags), 20, "run -h printed:\n%s", out)
	return flags
}

// envName is config.EnvName: --some-flag is BINLOG_ROUTER_SOME_FLAG.
func flagOfEnv(env string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(env, "BINLOG_ROUTER_"), "_", "-"))
}

var envVarRE = regexp.MustCompile(`BINLOG_ROUTER_[A-Z0-9_]*[A-Z0-9]`)

// TestEveryEnvVarIsAFlag reads every BINLOG_ROUTER_* name in this
// directory's files and the examples, comments and README included, and
// checks that `binlog-router run -h` has its flag.
func TestEveryEnvVarIsAFlag(t *testing.T) {
	flags := runFlags(t)
	files := []string{"Dockerfile", "compose.yaml", "k8s-sidecar.yaml", "k8s-ha.yaml", "README.md", "../examples/README.md"}
	seen := 0
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		for _, env := range envVarRE.FindAll(data, -1) {
			if bytes.Equal(env, []byte("BINLOG_ROUTER_SOME_FLAG")) {
				continue // the naming rule itself
			}
			seen++
			assert.True(t, flags[flagOfEnv(string(env))], "%s: %s names no flag of `binlog-router run`", name, env)
		}
	}
	assert.Greater(t, seen, 10)
}

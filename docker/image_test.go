package docker_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// engine is a Docker engine the test talks to: DOCKER_HOST for the docker
// client.
type engine struct{ host string }

// docker runs the docker client against e with the classic builder (no
// buildx plugin is needed) and returns its trimmed combined output.
func (e engine) docker(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if e.host != "" {
		cmd.Env = append(cmd.Env, "DOCKER_HOST="+e.host)
	}
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

func (e engine) must(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	out, err := e.docker(ctx, args...)
	require.NoError(t, err)
	return out
}

// dockerEngine returns the engine DOCKER_HOST or the default socket
// reaches, or else starts a private dockerd with no bridge, no iptables
// rules and no IP forwarding, on a socket and data root of its own,
// stopped by t.Cleanup. It skips the test when there is no docker client
// or no engine can be started.
func dockerEngine(t *testing.T) engine {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("no docker client (Debian: apt-get install docker.io)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := (engine{}).docker(ctx, "info", "--format", "{{.ServerVersion}}"); err == nil {
		return engine{}
	}
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/dockerd"); serr != nil {
			t.Skip("no Docker engine reachable and no dockerd to start (Debian: apt-get install docker.io)")
		}
		dockerd = "/usr/sbin/dockerd"
	}
	// A short path: a unix socket's path is limited to 108 bytes.
	dir, err := os.MkdirTemp("", "brd-")
	require.NoError(t, err)
	e := engine{host: "unix://" + filepath.Join(dir, "docker.sock")}
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	require.NoError(t, err)
	cmd := exec.Command(dockerd,
		"--bridge=none", "--iptables=false", "--ip-forward=false", "--ip6tables=false",
		"--host", e.host, "--data-root", filepath.Join(dir, "root"),
		"--exec-root", filepath.Join(dir, "exec"), "--pidfile", filepath.Join(dir, "dockerd.pid"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		// dockerd leaves its network namespace's bind mount behind.
		_ = syscall.Unmount(filepath.Join(dir, "exec", "netns", "default"), syscall.MNT_DETACH)
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("removing the private engine's directory: %v", err)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, err := e.docker(ctx, "info", "--format", "{{.ServerVersion}}")
		cancel()
		if err == nil {
			return e
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logf.Name())
			t.Skipf("no Docker engine could be started: dockerd exited:\n%s", tail(string(log), 2000))
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Skipf("no Docker engine could be started in 30 s: %v\n%s", err, tail(string(log), 2000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// baseContext lays out the build context of base.Dockerfile in dir: the
// host's CA certificates and tzdata, and a passwd and group with root and
// nonroot (65532).
func baseContext(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, copyFile("/etc/ssl/certs/ca-certificates.crt", filepath.Join(dir, "ca-certificates.crt")),
		"the host's CA certificates (Debian: ca-certificates)")
	src := "/usr/share/zoneinfo"
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(dir, "zoneinfo", rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		default:
			return copyFile(p, dst)
		}
	})
	require.NoError(t, err, "the host's tzdata (Debian: tzdata)")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "passwd"),
		[]byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "group"), []byte("root:x:0:\nnonroot:x:65532:\n"), 0o644))
}

// statedImageSize is the image size docs/containers.md states, in MB.
func statedImageSize(t *testing.T) float64 {
	t.Helper()
	doc, err := os.ReadFile("../docs/containers.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`image measured ([0-9.]+) MB`).FindSubmatch(doc)
	require.NotNil(t, m, `docs/containers.md states no size ("image measured N MB")`)
	mb, err := strconv.ParseFloat(string(m[1]), 64)
	require.NoError(t, err)
	return mb
}

// TestImage builds docker/Dockerfile's prebuilt target from the router
// binary built like `make build`, on a local base (base.Dockerfile), and
// runs it with --network host against a private MariaDB and Kafka on
// loopback, configured from the environment only: it runs as uid 65532,
// answers /healthz and /readyz, routes rows a read_committed consumer
// reads, stops on `docker stop` with exit 0 and the checkpoint at the
// source's last transaction, and is the size docs/containers.md states.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a Docker engine, MariaDB, Kafka and the router's image")
	}
	e := dockerEngine(t)
	bin := routerBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	suffix := func() string {
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}()
	base, image, name := "binlog-router-test-base:"+suffix, "binlog-router-test:"+suffix, "binlog-router-test-"+suffix
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = e.docker(ctx, "rm", "-f", name)
		_, _ = e.docker(ctx, "rmi", "-f", image, base)
	})

	// The base, then the image from the binary.
	baseDir := t.TempDir()
	baseContext(t, baseDir)
	start := time.Now()
	e.must(t, ctx, "build", "-q", "-f", "base.Dockerfile", "-t", base, baseDir)
	binDir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(binDir, "bin"), 0o755))
	require.NoError(t, copyFile(bin, filepath.Join(binDir, "bin", "binlog-router")))
	require.NoError(t, os.Chmod(filepath.Join(binDir, "bin", "binlog-router"), 0o755))
	e.must(t, ctx, "build", "-q", "-f", "Dockerfile", "--target", "prebuilt", "--build-arg", "BASE="+base, "-t", image, binDir)
	size, err := strconv.ParseFloat(e.must(t, ctx, "image", "inspect", "-f", "{{.Size}}", image), 64)
	require.NoError(t, err)
	sizeMB := size / 1e6
	t.Logf("base and image built in %s; image %.1f MB", time.Since(start).Round(time.Millisecond), sizeMB)
	assert.InEpsilon(t, statedImageSize(t), sizeMB, 0.1, "image size %.1f MB, docs/containers.md states another", sizeMB)
	assert.Equal(t, "nonroot:nonroot", e.must(t, ctx, "image", "inspect", "-f", "{{.Config.User}}", image))

	// MariaDB with mysql-init.sql, and Kafka, on loopback.
	db := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	k := devenv.NewKafka(t)
	root, err := db.DB("") // multiStatements=true
	require.NoError(t, err)
	defer root.Close()
	_, err = root.ExecContext(ctx, string(readManifest(t, "mysql-init.sql")))
	require.NoError(t, err, "applying mysql-init.sql to MariaDB")

	// The container, configured from the environment only.
	env := readCompose(t).Services["binlog-router"].Environment
	metricsAddr := freeAddr(t)
	env["BINLOG_ROUTER_MYSQL_ADDR"] = db.Addr()
	env["BINLOG_ROUTER_KAFKA_BROKERS"] = strings.Join(k.Brokers, ",")
	env["BINLOG_ROUTER_METRICS_ADDR"] = metricsAddr
	env["BINLOG_ROUTER_NAME"] += "-" + uuid.NewString()[:8]
	env["BINLOG_ROUTER_LOG_FORMAT"] = "json"
	args := []string{"run", "-d", "--name", name, "--network", "host"}
	for k, v := range env {
		args = append(args, "-e", k+"="+v)
	}
	e.must(t, ctx, append(args, image)...)
	logs := func() string {
		out, _ := e.docker(context.Background(), "logs", name)
		return out
	}

	// Non-root: the image's user and the process's real uid.
	pid := e.must(t, ctx, "inspect", "-f", "{{.State.Pid}}", name)
	status, err := os.ReadFile("/proc/" + pid + "/status")
	require.NoError(t, err, "the container's process %s; logs:\n%s", pid, logs())
	uid := regexp.MustCompile(`(?m)^Uid:\s+(\d+)\s+(\d+)`).FindSubmatch(status)
	require.NotNil(t, uid)
	assert.Equal(t, "65532", string(uid[1]), "real uid of the container's PID 1")
	assert.Equal(t, "65532", string(uid[2]), "effective uid of the container's PID 1")

	// /healthz and /readyz.
	baseURL := "http://" + metricsAddr
	poll := func(path string) {
		t.Helper()
		for {
			resp, err := http.Get(baseURL + path)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
			}
			if running := e.must(t, ctx, "inspect", "-f", "{{.State.Running}}", name); running != "true" || ctx.Err() != nil {
				t.Fatalf("%s never answered 200 (running: %s); logs:\n%s", path, running, logs())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	poll("/healthz")
	poll("/readyz")

	// Rows, one transaction each, read by a read_committed consumer.
	app, err := db.DB("shop")
	require.NoError(t, err)
	defer app.Close()
	var ids []string
	for i := range 5 {
		id := uuid.NewString()
		_, err := app.ExecContext(ctx, "INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'order', ?, 'OrderCreated', '{}')",
			id, fmt.Sprint(i))
		require.NoError(t, err)
		ids = append(ids, id)
	}
	var head string
	require.NoError(t, app.QueryRowContext(ctx, "SELECT @@gtid_binlog_pos").Scan(&head))
	for _, id := range ids {
		require.NotNil(t, consumeEvent(t, ctx, k.Brokers, "outbox.event.OrderCreated", id),
			"event %s not consumed; logs:\n%s", id, logs())
	}

	// docker stop: SIGTERM to PID 1, exit 0, the checkpoint at the head.
	e.must(t, ctx, "stop", "-t", "20", name)
	assert.Equal(t, "0", e.must(t, ctx, "inspect", "-f", "{{.State.ExitCode}}", name), "logs:\n%s", logs())
	cp, err := kafka.LoadCheckpoint(ctx, checkpoint.DefaultTopic, env["BINLOG_ROUTER_NAME"], kgo.SeedBrokers(k.Brokers...))
	require.NoError(t, err)
	assert.Equal(t, head, cp.GTIDSet, "checkpoint after docker stop; logs:\n%s", logs())
	t.Logf("checkpoint %s after docker stop; exit code 0", cp.GTIDSet)
}

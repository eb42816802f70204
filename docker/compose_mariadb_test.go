package docker_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestComposeSetupOnMariaDB runs what `docker compose up` would run, minus
// Docker and with MariaDB for MySQL 8.4 (no MySQL server is available
// here): mysql-init.sql applied as it is, the router binary built with the
// Dockerfile's command and configured by compose.yaml's environment (only
// the addresses changed), connecting as the least-privileged user
// binlog_router, then examples/orders writing an order as user app, and a
// consumer reading its event from Kafka.
func TestComposeSetupOnMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts MariaDB, Kafka and the router")
	}
	bin := routerBinary(t)
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	k := devenv.NewKafka(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// 1. mysql-init.sql, the whole file in one go, as the entrypoint runs it.
	initSQL, err := os.ReadFile("mysql-init.sql")
	require.NoError(t, err)
	root, err := m.DB("") // multiStatements=true
	require.NoError(t, err)
	defer root.Close()
	_, err = root.ExecContext(ctx, string(initSQL))
	require.NoError(t, err, "applying mysql-init.sql to MariaDB")

	// 2. The router, with compose.yaml's environment.
	env := readCompose(t).Services["binlog-router"].Environment
	metricsAddr := freeAddr(t)
	env["BINLOG_ROUTER_MYSQL_ADDR"] = m.Addr()
	env["BINLOG_ROUTER_KAFKA_BROKERS"] = strings.Join(k.Brokers, ",")
	env["BINLOG_ROUTER_METRICS_ADDR"] = metricsAddr
	env["BINLOG_ROUTER_NAME"] += "-" + uuid.NewString()[:8] // a fresh checkpoint, should KAFKA_BROKERS be shared
	router := startRouter(t, bin, env)
	base := "http://" + metricsAddr

	require.NoError(t, waitReplica(ctx, router, root, env["BINLOG_ROUTER_MYSQL_USER"]),
		"router never connected as a replica; output:\n%s", router.output())

	// 3. The example application, as the README runs it.
	example := filepath.Join(t.TempDir(), "orders")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", example, "../examples/orders").CombinedOutput()
	require.NoError(t, err, "%s", out)
	dsn := fmt.Sprintf("app:%s@tcp(%s)/shop", initUsers(t)["app"], m.Addr())
	out, err = exec.CommandContext(ctx, example, "-dsn", dsn).CombinedOutput()
	require.NoError(t, err, "%s", out)
	match := regexp.MustCompile(`^order (\d+) created, event ([0-9a-f-]{36})\n$`).FindStringSubmatch(string(out))
	require.NotNil(t, match, "example printed %q", out)
	orderID, eventID := match[1], match[2]

	// 4. The event in Kafka.
	rec := consumeEvent(t, ctx, k.Brokers, "outbox.event.OrderCreated", eventID)
	require.NotNil(t, rec, "event %s not consumed; router output:\n%s", eventID, router.output())
	assert.Equal(t, orderID, string(rec.Key))
	var payload struct {
		OrderID  int64  `json:"order_id"`
		Customer string `json:"customer"`
	}
	require.NoError(t, json.Unmarshal(rec.Value, &payload))
	assert.Equal(t, orderID, fmt.Sprint(payload.OrderID))
	headers := map[string]string{}
	for _, h := range rec.Headers {
		headers[h.Key] = string(h.Value)
	}
	assert.Equal(t, "OrderCreated", headers["event_type"])
	assert.Equal(t, "order", headers["aggregate_type"])
	assert.NotEmpty(t, headers["binlog_gtid"])

	// The endpoints of --metrics-addr, which compose.yaml publishes and
	// k8s-sidecar.yaml probes.
	t.Run("MetricsEndpoints", func(t *testing.T) {
		require.NoError(t, pollHTTP(ctx, router, base+"/readyz"))
		for _, p := range []string{"/healthz", "/metrics"} {
			code, body := get(t, base+p)
			assert.Equal(t, http.StatusOK, code, "%s: %s", p, body)
		}
	})

	// 5. SIGTERM, as docker compose stop sends it: a clean exit.
	code, err := router.stop(20 * time.Second)
	require.NoError(t, err, "router output:\n%s", router.output())
	assert.Equal(t, 0, code, "router output:\n%s", router.output())
}

// routerProcess is a running router and its combined output.
type routerProcess struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	err  error
}

func (p *routerProcess) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *routerProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startRouter runs `bin run`, the image's ENTRYPOINT and CMD, with env as
// its only BINLOG_ROUTER_* variables. Cleanup kills it if still running.
func startRouter(t *testing.T, bin string, env map[string]string) *routerProcess {
	t.Helper()
	p := &routerProcess{done: make(chan struct{})}
	p.cmd = exec.Command(bin, "run")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BINLOG_ROUTER_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	for k, v := range env {
		p.cmd.Env = append(p.cmd.Env, k+"="+v)
	}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("router output:\n%s", p.output())
		}
	})
	return p
}

// stop sends SIGTERM and waits up to timeout for the exit code.
func (p *routerProcess) stop(timeout time.Duration) (int, error) {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return -1, err
	}
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return -1, fmt.Errorf("router still running %s after SIGTERM", timeout)
	}
}

// waitReplica polls until the router's binlog dump connection, as user,
// shows in the server's process list.
func waitReplica(ctx context.Context, p *routerProcess, db *sql.DB, user string) error {
	for {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump' AND USER = ?", user).Scan(&n)
		if err == nil && n > 0 {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("router exited (%v)", p.err)
		case <-ctx.Done():
			return fmt.Errorf("no Binlog Dump connection of %s (last error: %v): %w", user, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pollHTTP polls url until it answers 200, the router exits or ctx ends.
func pollHTTP(ctx context.Context, p *routerProcess, url string) error {
	var last string
	for {
		if resp, err := http.Get(url); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case <-p.done:
			return fmt.Errorf("router exited (%v) while waiting for %s", p.err, url)
		case <-ctx.Done():
			return fmt.Errorf("%s: last answer %s: %w", url, last, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// consumeEvent reads topic with read_committed isolation until a record
// with header id == eventID arrives or ctx ends (then nil).
func consumeEvent(t *testing.T, ctx context.Context, brokers []string, topic, eventID string) *kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(100*time.Millisecond),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	require.NoError(t, err)
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		for _, r := range fs.Records() {
			for _, h := range r.Headers {
				if h.Key == "id" && string(h.Value) == eventID {
					return r
				}
			}
		}
	}
	return nil
}

// freeAddr returns a loopback address with a port free at the time of the
// call.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

package test

import (
	"bufio"
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
	"github.com/binlog-router/binlog-router/test/harness"
)

// inboxChild is one run of test/inboxconsumer.
type inboxChild struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
	err  error
}

func buildInboxConsumer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "inboxconsumer")
	cmd := exec.Command("go", "build", "-o", bin, "./inboxconsumer")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("building inboxconsumer: %v", err)
	}
	return bin
}

// TestInboxKillWindows SIGKILLs a consumer process after the handler and
// before COMMIT, after COMMIT and before the offset commit, and during a
// rebalance (two members, one joining, the other dying at revocation), on
// both databases, and checks that each event's side effect is applied
// exactly once across all runs. SEED= replays the kill points.
func TestInboxKillWindows(t *testing.T) {
	bin := buildInboxConsumer(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("SEED=%d", seed)
	// The children use one-second sessions so that a killed member's
	// partitions move on soon; the brokers' minimum is lowered to allow it.
	var apache *devenv.Kafka
	if harness.OnApache() {
		apache = devenv.NewApacheKafka(t, devenv.ApacheKafkaConfig{Props: map[string]string{"group.min.session.timeout.ms": "500"}})
	}
	for _, d := range inboxtest.Databases() {
		t.Run(d.Name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(d.Dialect)))
			db := d.OpenInbox(t)
			inboxtest.MustExec(t, db, "CREATE TABLE effects (event_id VARCHAR(64) NOT NULL)")
			k := apache
			if k == nil {
				k = devenv.NewKafka(t, kfake.GroupMinSessionTimeout(500*time.Millisecond))
			}
			topic, name := inboxtest.Unique("inbox.kill"), inboxtest.Unique("effects")
			const n = 400
			var recs []*kgo.Record
			for i := range n {
				recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("agg-%d", i%30)), Value: []byte("{}"),
					Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(fmt.Sprintf("ev-%03d", i))}}})
			}
			inboxtest.ProduceRecords(t, k.Brokers, recs)
			dsn := inboxChildDSN(t, db, d)

			var children []*inboxChild
			start := func(args ...string) *inboxChild {
				c := &inboxChild{done: make(chan struct{})}
				c.cmd = exec.Command(bin, append([]string{"-dialect", d.Dialect.String(), "-dsn", dsn,
					"-brokers", strings.Join(k.Brokers, ","), "-topic", topic, "-name", name}, args...)...)
				c.cmd.Stdout = &c.out
				c.cmd.Stderr = os.Stderr
				if err := c.cmd.Start(); err != nil {
					t.Fatal(err)
				}
				go func() { c.err = c.cmd.Wait(); close(c.done) }()
				children = append(children, c)
				t.Cleanup(func() { _ = c.cmd.Process.Kill(); <-c.done })
				return c
			}
			killed := func(c *inboxChild) bool {
				var ee *exec.ExitError
				if errors.As(c.err, &ee) {
					ws, ok := ee.Sys().(syscall.WaitStatus)
					return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
				}
				return false
			}
			effects := func() (rows, distinct int) {
				if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT event_id) FROM effects").Scan(&rows, &distinct); err != nil {
					t.Fatal(err)
				}
				return rows, distinct
			}
			waitExit := func(c *inboxChild, timeout time.Duration) bool {
				select {
				case <-c.done:
					return true
				case <-time.After(timeout):
					return false
				}
			}
			kills := map[string]int{}
			for _, window := range []string{"handler", "commit"} {
				for range 3 {
					c := start("-kill", window, "-kill-at", strconv.Itoa(1+rng.IntN(40)), "-delay", "2ms")
					if !waitExit(c, 60*time.Second) {
						t.Fatalf("consumer with -kill %s did not die", window)
					}
					if !killed(c) {
						t.Fatalf("consumer with -kill %s exited without SIGKILL: %v", window, c.err)
					}
					kills[window]++
				}
			}
			for range 3 {
				before, _ := effects()
				victim := start("-kill", "revoke", "-delay", "10ms")
				harness.Eventually(t, 60*time.Second, "the victim to make progress", func() bool { r, _ := effects(); return r >= before+10 })
				helper := start("-delay", "10ms")
				if !waitExit(victim, 60*time.Second) || !killed(victim) {
					t.Fatalf("consumer with -kill revoke did not die at a rebalance: %v", victim.err)
				}
				kills["revoke"]++
				_ = helper.cmd.Process.Signal(syscall.SIGTERM)
				if !waitExit(helper, 30*time.Second) || helper.err != nil {
					t.Fatalf("helper consumer did not stop cleanly: %v", helper.err)
				}
			}
			final := start()
			harness.Eventually(t, 120*time.Second, "every event applied", func() bool { _, d := effects(); return d >= n })
			_ = final.cmd.Process.Signal(syscall.SIGTERM)
			if !waitExit(final, 30*time.Second) || final.err != nil {
				t.Fatalf("final consumer did not stop cleanly: %v", final.err)
			}
			rows, distinct := effects()
			duplicates := 0
			for _, c := range children {
				sc := bufio.NewScanner(bytes.NewReader(c.out.Bytes()))
				for sc.Scan() {
					if strings.HasPrefix(sc.Text(), "duplicate ") {
						duplicates++
					}
				}
			}
			t.Logf("%s on %s: records %d, kills %v, runs %d, redeliveries skipped as duplicates %d, side effects applied %d (distinct %d)",
				d.Name, harness.BrokerName(), n, kills, len(children), duplicates, rows, distinct)
			if rows != n || distinct != n {
				t.Errorf("side effects: %d rows, %d distinct events, want %d each", rows, distinct, n)
			}
			if duplicates < kills["commit"] {
				t.Errorf("%d duplicates, want at least one per kill after COMMIT (%d)", duplicates, kills["commit"])
			}
		})
	}
}

var inboxDSNOnce sync.Mutex

// inboxChildDSN is the DSN of db's server for the child process.
func inboxChildDSN(t *testing.T, db *sql.DB, d inboxtest.DB) string {
	t.Helper()
	inboxDSNOnce.Lock()
	defer inboxDSNOnce.Unlock()
	if d.Dialect == inbox.MySQL {
		var port int
		if err := db.QueryRow("SELECT @@port").Scan(&port); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("root@tcp(127.0.0.1:%d)/shop", port)
	}
	var port int
	if err := db.QueryRow("SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/shop?sslmode=disable", port)
}

package metrics

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const mysqlSet = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"

func TestServeMetricsValues(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now), Version("1.2.3"))
	base := serve(t, m, nil)

	m.Routed("orders", 100)
	m.Routed("orders", 150)
	m.Routed("users", 50)
	m.Transactions(3)
	m.Committed(mysqlSet, clk.now().Add(-4*time.Second), 3, time.Time{})
	m.BufferedFrom(func() int64 { return 7 })
	m.Reconnect()
	m.RowError("invalid_payload_json")
	m.DeadLetter("invalid_payload_json")
	m.Failed("commit")
	m.OutboxUpdate("app.outbox", "3e11fa47-71ca-11e1-9e33-c80aa9429562:6", 2)
	m.DDL("3e11fa47-71ca-11e1-9e33-c80aa9429562:7", "ALTER TABLE app.outbox ADD COLUMN x INT")
	clk.advance(2 * time.Second)

	mfs := scrape(t, base)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"binlog_router_events_routed_total", []string{"topic", "orders"}, 2},
		{"binlog_router_events_routed_total", []string{"topic", "users"}, 1},
		{"binlog_router_bytes_routed_total", []string{"topic", "orders"}, 250},
		{"binlog_router_bytes_routed_total", []string{"topic", "users"}, 50},
		{"binlog_router_transactions_total", nil, 3},
		{"binlog_router_commits_total", nil, 1},
		{"binlog_router_committed_records_total", nil, 3},
		{"binlog_router_lag_seconds", nil, 6}, // 4 s behind at commit, 2 s since
		{"binlog_router_checkpoint_age_seconds", nil, 2},
		{"binlog_router_checkpoint_info", []string{"flavor", "mysql"}, 1},
		{"binlog_router_caught_up", nil, 0},
		{"binlog_router_kafka_buffered_records", nil, 7},
		{"binlog_router_reconnects_total", nil, 1},
		{"binlog_router_errors_total", []string{"kind", "invalid_payload_json"}, 1},
		{"binlog_router_errors_total", []string{"kind", "commit"}, 1},
		{"binlog_router_errors_total", []string{"kind", "outbox_update"}, 2},
		{"binlog_router_errors_total", []string{"kind", "produce"}, 0},
		{"binlog_router_errors_total", []string{"kind", "checkpoint_behind"}, 0},
		{"binlog_router_dead_letters_total", []string{"kind", "invalid_payload_json"}, 1},
		{"binlog_router_ddl_total", nil, 1},
		{"binlog_router_build_info", []string{"version", "1.2.3"}, 1},
		{"binlog_router_kafka_connects_total", nil, 0},
		{"binlog_router_kafka_request_duration_seconds", nil, 0},
	} {
		if got := value(t, mfs, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "promhttp_metric_handler_requests_total"} {
		if _, ok := mfs[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	// Only bounded values become labels: no GTID, query or table.
	_, body := get(t, base+"/metrics")
	for _, leak := range []string{"3e11fa47", "ALTER TABLE", "app.outbox"} {
		if strings.Contains(body, leak) {
			t.Errorf("/metrics contains %q", leak)
		}
	}

	code, body := get(t, base+"/healthz")
	if code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q, want 200 \"ok\\n\"", code, body)
	}
}

func TestLag(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now))
	lag := func() time.Duration { return m.lag(clk.now()) }
	steps := []struct {
		name string
		do   func()
		want time.Duration
	}{
		{"nothing known", func() {}, 0},
		{"commit 10s behind", func() { m.Transactions(1); m.Committed("0-1-5", clk.now().Add(-10*time.Second), 1, time.Time{}) }, 10 * time.Second},
		{"keeps growing while stalled", func() { clk.advance(5 * time.Second) }, 15 * time.Second},
		{"heartbeat with nothing pending", func() { m.CaughtUp() }, 0},
		{"stays 0 while idle", func() { clk.advance(time.Minute) }, 0},
		{"periodic heartbeat", func() { m.CaughtUp() }, 0},
		{"a transaction ends caught-up: lag since the heartbeat", func() { m.Transactions(1); clk.advance(2 * time.Second) }, 2 * time.Second},
		{"heartbeat with a transaction pending changes nothing", func() { m.CaughtUp(); clk.advance(time.Second) }, 3 * time.Second},
		{"commit of a recent transaction", func() { m.Committed("0-1-6", clk.now().Add(-time.Second), 0, time.Time{}) }, time.Second},
		{"heartbeat after the commit", func() { m.CaughtUp() }, 0},
		{"source clock ahead of ours", func() { m.Transactions(1); m.Committed("0-1-7", clk.now().Add(time.Hour), 1, time.Time{}) }, 0},
	}
	for _, s := range steps {
		s.do()
		if got := lag(); got != s.want {
			t.Fatalf("%s: lag = %v, want %v", s.name, got, s.want)
		}
	}
	if got := m.Snapshot().Flavor; got != "mariadb" {
		t.Errorf("flavor from %q = %q, want mariadb", "0-1-7", got)
	}
}

func TestReadyzFlips(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now), IdleCheckpoint(5*time.Second)) // window max(30s, 15s) = 30s
	base := serve(t, m, nil)

	expect := func(step string, wantCode int, wantFirst string) {
		t.Helper()
		code, body := get(t, base+"/readyz")
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		if code != wantCode || len(lines) != 2 || !strings.HasPrefix(lines[0], wantFirst) {
			t.Fatalf("%s: /readyz = %d %q, want %d with first line %q and 2 lines", step, code, body, wantCode, wantFirst)
		}
		if set := m.CheckpointGTIDSet(); set != "" && lines[1] != "checkpoint: "+set {
			t.Fatalf("%s: /readyz second line %q, want the checkpoint %q", step, lines[1], set)
		}
		expectReadyGauge(t, base, step, code == 200)
	}

	expect("before anything", 503, "not ready: not streaming yet")
	m.Transactions(2)
	m.Committed(mysqlSet, clk.now(), 2, time.Time{})
	expect("after a commit", 200, "ready")
	clk.advance(30 * time.Second)
	expect("at the limit", 200, "ready")
	clk.advance(time.Second)
	expect("past the limit", 503, "not ready: stalled: last checkpoint 31s ago")
	m.Transactions(1)
	m.CaughtUp()
	expect("heartbeat with a transaction pending", 503, "not ready: stalled")
	m.Committed(mysqlSet+",4c2e1a5f-71ca-11e1-9e33-c80aa9429562:1", clk.now(), 0, time.Time{})
	expect("commit", 200, "ready")
	clk.advance(20 * time.Second)
	m.CaughtUp()
	clk.advance(29 * time.Second)
	expect("idle, heartbeat 29s ago", 200, "ready")
	clk.advance(2 * time.Second)
	expect("no heartbeat for 31s", 503, "not ready: stalled: last caught-up heartbeat 31s ago")
}

func TestReadyWindowFromIdleCheckpoint(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now), IdleCheckpoint(20*time.Second)) // 3×20s = 60s
	m.Committed("0-1-1", clk.now(), 0, time.Time{})
	clk.advance(59 * time.Second)
	if err := m.Ready(); err != nil {
		t.Fatalf("59s after a commit with a 60s window: %v", err)
	}
	clk.advance(2 * time.Second)
	if err := m.Ready(); err == nil {
		t.Fatal("61s after a commit with a 60s window: ready")
	}
}

func TestReadyFunc(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now))
	var standby atomic.Bool
	standby.Store(true)
	base := serve(t, m, func() error {
		if standby.Load() {
			return errors.New("standby:\nanother router is active")
		}
		return nil
	})
	m.CaughtUp()
	code, body := get(t, base+"/readyz")
	if code != 503 || body != "not ready: standby: another router is active\ncheckpoint: (none yet)\n" {
		t.Fatalf("standby: /readyz = %d %q", code, body)
	}
	expectReadyGauge(t, base, "standby", false)
	standby.Store(false)
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Fatalf("active: /readyz = %d %q", code, body)
	}
	expectReadyGauge(t, base, "active", true)
}

// expectReadyGauge checks that binlog_router_ready says what /readyz
// answered.
func expectReadyGauge(t *testing.T, base, step string, ready bool) {
	t.Helper()
	want := 0.0
	if ready {
		want = 1
	}
	if got := value(t, scrape(t, base), "binlog_router_ready"); got != want {
		t.Fatalf("%s: binlog_router_ready = %v, want %v", step, got, want)
	}
}

func TestServeShutsDownWithContext(t *testing.T) {
	m := New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Serve(ctx, "127.0.0.1:0", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, "http://"+srv.Addr()+"/healthz"); code != 200 {
		t.Fatalf("/healthz = %d", code)
	}
	cancel()
	if err := srv.Wait(); err != nil {
		t.Fatalf("Wait after cancel: %v", err)
	}
	if _, err := http.Get("http://" + srv.Addr() + "/healthz"); err == nil {
		t.Fatal("server still answers after shutdown")
	}

	// An address in use is reported by Serve itself.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	first, err := Serve(ctx2, "127.0.0.1:0", New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Serve(ctx2, first.Addr(), New(nil), nil); err == nil {
		t.Fatalf("second Serve on %s: no error", first.Addr())
	}
	cancel2()
	if err := first.Wait(); err != nil {
		t.Fatal(err)
	}
}

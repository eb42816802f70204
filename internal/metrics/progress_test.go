package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func progressLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	buf.Reset()
	return out
}

func TestProgressLines(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now))
	var buf bytes.Buffer
	p := NewProgress(m, zerolog.New(&buf), ProgressConfig{})
	route := func(n int) {
		for range n {
			m.Routed("orders", 10)
		}
	}

	// 100 s behind. The first tick is the baseline.
	m.Transactions(1)
	m.Committed(mysqlSet, clk.now().Add(-100*time.Second), 1, time.Time{})
	p.Tick()
	if got := progressLines(t, &buf); len(got) != 0 {
		t.Fatalf("baseline tick logged %v", got)
	}

	// In 10 s: 500 events, 20 transactions, and the source position moved
	// 30 s, so the lag shrank from 100 s to 80 s: 2 s per s, 40 s to go.
	clk.advance(10 * time.Second)
	route(500)
	m.Transactions(20)
	m.Committed(mysqlSet, clk.now().Add(-80*time.Second), 500, time.Time{})
	p.Tick()
	lines := progressLines(t, &buf)
	if len(lines) != 1 {
		t.Fatalf("got %d lines, want 1: %v", len(lines), lines)
	}
	want := map[string]any{
		"level": "info", "message": "catching up", "component": "progress",
		"gtid_set": mysqlSet, "events_per_sec": 50.0, "transactions_per_sec": 2.0,
		"lag_seconds": 80.0, "eta": "40s", "eta_seconds": 40.0,
	}
	for k, v := range want {
		if lines[0][k] != v {
			t.Errorf("field %s = %v (%T), want %v", k, lines[0][k], lines[0][k], v)
		}
	}

	// Stalled for 10 s: the lag grows, no estimate.
	clk.advance(10 * time.Second)
	p.Tick()
	lines = progressLines(t, &buf)
	if len(lines) != 1 || lines[0]["eta"] != "unknown" || lines[0]["lag_seconds"] != 90.0 || lines[0]["events_per_sec"] != 0.0 {
		t.Fatalf("stalled: %v", lines)
	}
	if _, ok := lines[0]["eta_seconds"]; ok {
		t.Errorf("stalled: eta_seconds present: %v", lines[0])
	}

	// Caught up: one closing line, then silence.
	clk.advance(10 * time.Second)
	m.Committed(mysqlSet, clk.now().Add(-time.Second), 0, time.Time{})
	m.CaughtUp()
	p.Tick()
	lines = progressLines(t, &buf)
	if len(lines) != 1 || lines[0]["message"] != "caught up" || lines[0]["lag_seconds"] != 0.0 || lines[0]["took"] != "20s" {
		t.Fatalf("caught up: %v", lines)
	}
	clk.advance(10 * time.Second)
	p.Tick()
	if got := progressLines(t, &buf); len(got) != 0 {
		t.Fatalf("caught up, next tick logged %v", got)
	}
}

func TestProgressQuietBelowMinLag(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now))
	var buf bytes.Buffer
	p := NewProgress(m, zerolog.New(&buf), ProgressConfig{MinLag: 30 * time.Second})
	m.Committed("0-1-1", clk.now().Add(-20*time.Second), 0, time.Time{})
	p.Tick()
	clk.advance(9 * time.Second) // 29 s behind
	p.Tick()
	if got := progressLines(t, &buf); len(got) != 0 {
		t.Fatalf("29s lag with MinLag 30s logged %v", got)
	}
	clk.advance(2 * time.Second) // 31 s behind
	p.Tick()
	if got := progressLines(t, &buf); len(got) != 1 || got[0]["message"] != "catching up" {
		t.Fatalf("31s lag with MinLag 30s: %v", got)
	}
}

func TestProgressRunStops(t *testing.T) {
	m := New(nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewProgress(m, zerolog.Nop(), ProgressConfig{Every: time.Millisecond}).Run(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKgoConnectionWarningsRateLimited: a broker that is down makes
// franz-go warn at every dial; one warning per address and interval gets
// through, the next one says how many were left out, other brokers and
// other warnings are not held back, and the SASL hint is rewritten.
func TestKgoConnectionWarningsRateLimited(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	k := &kgoLogger{l: zerolog.New(&buf).Level(zerolog.InfoLevel),
		limit: newConnLimit(10*time.Second, func() time.Time { return now })}
	for range 50 {
		k.Log(kgo.LogLevelWarn, "unable to open connection to broker", "addr", "127.0.0.1:1", "err", "connection refused")
		k.Log(kgo.LogLevelWarn, "read from broker errored, killing connection after 0 successful responses (is SASL missing?)", "addr", "127.0.0.1:1")
		k.Log(kgo.LogLevelWarn, "unable to open connection to broker", "addr", "127.0.0.1:2")
		now = now.Add(100 * time.Millisecond) // 5 s in all
	}
	k.Log(kgo.LogLevelWarn, "some other warning", "addr", "127.0.0.1:1")
	k.Log(kgo.LogLevelWarn, "some other warning", "addr", "127.0.0.1:1")
	now = now.Add(10 * time.Second)
	k.Log(kgo.LogLevelWarn, "unable to open connection to broker", "addr", "127.0.0.1:1")

	type line struct {
		Level, Message, Addr string
		Suppressed           int
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m struct {
			Level      string `json:"level"`
			Message    string `json:"message"`
			Addr       string `json:"addr"`
			Suppressed int    `json:"suppressed"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, line{m.Level, m.Message, m.Addr, m.Suppressed})
	}
	want := []line{
		{"warn", "unable to open connection to broker", "127.0.0.1:1", 0},
		{"warn", "read from broker errored, killing connection after 0 successful responses (the broker went away, or its listener needs SASL or TLS that is not configured)", "127.0.0.1:1", 0},
		{"warn", "unable to open connection to broker", "127.0.0.1:2", 0},
		{"warn", "some other warning", "127.0.0.1:1", 0},
		{"warn", "some other warning", "127.0.0.1:1", 0},
		{"warn", "unable to open connection to broker", "127.0.0.1:1", 49},
	}
	if len(got) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

package prune

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// TestPacerWait: after a batch the pacer waits the pause, or until the
// rows deleted so far are within the rate cap counted from the start.
func TestPacerWait(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pause   time.Duration
		rate    int
		deleted int64
		least   time.Duration
		most    time.Duration
	}{
		{"pause only", 50 * time.Millisecond, -1, 1_000_000, 50 * time.Millisecond, time.Second},
		{"rate beyond the pause", time.Millisecond, 1000, 300, 250 * time.Millisecond, 2 * time.Second},
		{"no pause, no cap", -1, -1, 1_000_000, 0, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Pause: tc.pause, Rate: tc.rate}
			cfg.setDefaults()
			p := &pacer{cfg: &cfg, sum: &Summary{Deleted: tc.deleted}, began: time.Now()}
			start := time.Now()
			require.NoError(t, p.wait(context.Background()))
			took := time.Since(start)
			assert.GreaterOrEqual(t, took, tc.least)
			assert.Less(t, took, tc.most)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := Config{Pause: time.Hour}
	p := &pacer{cfg: &cfg, sum: &Summary{}, began: time.Now()}
	assert.ErrorIs(t, p.wait(ctx), context.Canceled, "a stop ends the pause")
}

// TestPacerProgress: the progress line names the table, the cutoff, the
// rows deleted and the rate, at most once per interval.
func TestPacerProgress(t *testing.T) {
	var buf bytes.Buffer
	cfg := Config{Progress: time.Hour, Log: zerolog.New(&buf)}
	cfg.setDefaults()
	cutoff := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	p := &pacer{cfg: &cfg, sum: &Summary{Cutoff: cutoff, Deleted: 4000, Batches: 4}, began: time.Now().Add(-2 * time.Second), lastLog: time.Now().Add(-2 * time.Hour)}
	tgt := target{name: schema.TableName{Database: "shop", Table: "outbox"}}
	p.progress(tgt)
	p.progress(tgt)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 1, "once per interval")
	for _, want := range []string{`"message":"prune progress"`, `"table":"shop.outbox"`, `"deleted":4000`, `"batches":4`, `"rows_per_second":`, `"cutoff":"2026-11-28T00:00:00Z"`} {
		assert.Contains(t, lines[0], want)
	}
}

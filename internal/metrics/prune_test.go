package metrics

import (
	"errors"
	"testing"
	"time"
)

// TestPruned: the series exist at 0 from the start; a prune adds its
// rows and sets the cutoff, a failed one counts as failed.
func TestPruned(t *testing.T) {
	m := New(nil)
	base := serve(t, m, nil)
	read := func() (ok, failed, deleted, cutoff float64) {
		t.Helper()
		mfs := scrape(t, base)
		return value(t, mfs, "binlog_router_prune_runs_total", "result", "ok"),
			value(t, mfs, "binlog_router_prune_runs_total", "result", "failed"),
			value(t, mfs, "binlog_router_prune_rows_deleted_total"), value(t, mfs, "binlog_router_prune_cutoff_timestamp_seconds")
	}
	if ok, failed, deleted, cutoff := read(); ok+failed+deleted+cutoff != 0 {
		t.Fatalf("before any prune: %v %v %v %v, want zeros", ok, failed, deleted, cutoff)
	}
	at := time.Unix(1_800_000_000, 0)
	m.Pruned(1200, at, nil)
	m.Pruned(300, time.Time{}, errors.New("checkpoint behind"))
	if ok, failed, deleted, cutoff := read(); ok != 1 || failed != 1 || deleted != 1500 || cutoff != 1_800_000_000 {
		t.Fatalf("after two prunes: ok %v, failed %v, deleted %v, cutoff %v; want 1, 1, 1500, 1800000000", ok, failed, deleted, cutoff)
	}
}

package metrics

import (
	"slices"
	"testing"
)

type recordingObserver struct{ calls []string }

func (r *recordingObserver) OutboxUpdate(table, gtid string, rows int) {
	r.calls = append(r.calls, "update "+table)
}
func (r *recordingObserver) DDL(gtid, query string) { r.calls = append(r.calls, "ddl "+query) }
func (r *recordingObserver) Reconnect()             { r.calls = append(r.calls, "reconnect") }
func (r *recordingObserver) Replayed(gtid string)   { r.calls = append(r.calls, "replayed "+gtid) }

func TestTeeCountsAndForwards(t *testing.T) {
	m := New(nil)
	next := &recordingObserver{}
	tee := m.Tee(next)
	tee.OutboxUpdate("app.outbox", "0-1-2", 3)
	tee.DDL("0-1-3", "ALTER TABLE app.outbox ADD x INT")
	tee.Reconnect()
	tee.Replayed("0-1-1")
	m.Tee(nil).Replayed("0-1-2")                     // no next: counts only
	m.Tee(nil).DDL("0-1-4", "DROP TABLE app.outbox") // no next: counts only

	want := []string{"update app.outbox", "ddl ALTER TABLE app.outbox ADD x INT", "reconnect", "replayed 0-1-1"}
	if !slices.Equal(next.calls, want) {
		t.Errorf("forwarded %q, want %q", next.calls, want)
	}
	mfs := gather(t, m)
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"binlog_router_errors_total", []string{"kind", "outbox_update"}, 3},
		{"binlog_router_ddl_total", nil, 2},
		{"binlog_router_reconnects_total", nil, 1},
		{"binlog_router_binlog_transactions_skipped_total", nil, 2},
	} {
		if got := value(t, mfs, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}

package metrics

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPartitionChanged: a change is counted per topic and shown in
// /readyz for PartitionNoteFor without making the router unready.
func TestPartitionChanged(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now))
	base := serve(t, m, func() error { return nil })
	m.Committed("0-1-1", clk.now(), 1, time.Time{})
	m.PartitionChanged("orders", 1, 4)
	if v := value(t, scrape(t, base), "binlog_router_kafka_partition_changes_total", "topic", "orders"); v != 1 {
		t.Errorf("binlog_router_kafka_partition_changes_total{topic=orders} = %v, want 1", v)
	}
	code, body := get(t, base+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "partitions: topic orders went from 1 to 4 partitions at 2026-03-01T12:00:00Z") {
		t.Errorf("/readyz after a change: %d %q", code, body)
	}
	clk.advance(PartitionNoteFor + time.Second)
	m.Committed("0-1-2", clk.now(), 1, time.Time{})
	if _, body := get(t, base+"/readyz"); strings.Contains(body, "partitions:") {
		t.Errorf("/readyz %s after the change: %q", PartitionNoteFor, body)
	}
}

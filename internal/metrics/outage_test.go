package metrics

import (
	"testing"
	"time"
)

// TestKafkaOutage: both series are exposed at 0 from the start, each
// ended outage counts once and the gauge holds the last one's length.
func TestKafkaOutage(t *testing.T) {
	m := New(nil)
	base := serve(t, m, nil)
	read := func() (total, last float64) {
		t.Helper()
		mfs := scrape(t, base)
		return value(t, mfs, "binlog_router_kafka_outages_total"), value(t, mfs, "binlog_router_kafka_last_outage_seconds")
	}
	if total, last := read(); total != 0 || last != 0 {
		t.Fatalf("before any outage: total %v, last %v; want 0 and 0", total, last)
	}
	m.KafkaOutage(4200 * time.Millisecond)
	m.KafkaOutage(1500 * time.Millisecond)
	if total, last := read(); total != 2 || last != 1.5 {
		t.Fatalf("after outages of 4.2s and 1.5s: total %v, last %v; want 2 and 1.5", total, last)
	}
}

package metrics

import (
	"fmt"
	"maps"
	"testing"
)

func TestTopicLabelBounded(t *testing.T) {
	m := New(nil, MaxTopics(3))
	for i := 1; i <= 5; i++ {
		m.Routed(fmt.Sprintf("t%d", i), 10)
	}
	m.Routed("t1", 10) // admitted topics stay themselves
	m.Routed("t5", 10) // and later ones stay "other"

	got := labelValues(gather(t, m), "binlog_router_events_routed_total", "topic")
	want := map[string]float64{"t1": 2, "t2": 1, "t3": 1, Other: 3}
	if !maps.Equal(got, want) {
		t.Errorf("events by topic = %v, want %v", got, want)
	}
	bytes := labelValues(gather(t, m), "binlog_router_bytes_routed_total", "topic")
	if bytes[Other] != 30 || len(bytes) != 4 {
		t.Errorf("bytes by topic = %v, want 4 labels with other=30", bytes)
	}
	if n := len(m.routedCache); n != 3 {
		t.Errorf("routed cache holds %d topics, want 3", n)
	}
}

func TestKindLabelBounded(t *testing.T) {
	m := New(nil)
	for i := range 2 * DefaultMaxKinds {
		m.RowError(fmt.Sprintf("kind_%d", i))
		m.DeadLetter(fmt.Sprintf("kind_%d", i))
	}
	mfs := gather(t, m)
	errs := labelValues(mfs, "binlog_router_errors_total", "kind")
	// The built-in kinds produce, kafka_group, commit, kafka,
	// outbox_update and checkpoint_behind are always present.
	if len(errs) != DefaultMaxKinds+1+6 {
		t.Errorf("%d error kinds, want %d + other + the 6 built-in kinds", len(errs), DefaultMaxKinds)
	}
	if errs[Other] != DefaultMaxKinds {
		t.Errorf("errors{kind=other} = %v, want %d", errs[Other], DefaultMaxKinds)
	}
	if dl := labelValues(mfs, "binlog_router_dead_letters_total", "kind"); len(dl) != DefaultMaxKinds+1 {
		t.Errorf("%d dead-letter kinds, want %d + other", len(dl), DefaultMaxKinds)
	}
}

func TestLimiter(t *testing.T) {
	l := newLimiter(2)
	for _, c := range []struct{ in, want string }{
		{"a", "a"}, {"b", "b"}, {"c", Other}, {"a", "a"}, {"b", "b"}, {"d", Other},
	} {
		if got := l.value(c.in); got != c.want {
			t.Errorf("value(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// RoutedRecords counts a batch's records of a topic at once, the same as
// as many Routed calls; a count of none changes nothing.
func TestRoutedRecordsCountsABatch(t *testing.T) {
	m := New(nil)
	m.RoutedRecords("orders", 3, 300)
	m.Routed("orders", 50)
	m.RoutedRecords("users", 0, 0)
	events := labelValues(gather(t, m), "binlog_router_events_routed_total", "topic")
	bytes := labelValues(gather(t, m), "binlog_router_bytes_routed_total", "topic")
	if !maps.Equal(events, map[string]float64{"orders": 4}) || !maps.Equal(bytes, map[string]float64{"orders": 350}) {
		t.Errorf("events %v, bytes %v by topic; want orders 4 and 350 only", events, bytes)
	}
	if n := m.events.Load(); n != 4 {
		t.Errorf("progress count %d, want 4", n)
	}
}

// BenchmarkRouted is the metrics' cost of a record: counted one by one
// (Routed), or a batch of 100 records of a topic at once (RoutedRecords,
// what the loop does), per record.
func BenchmarkRouted(b *testing.B) {
	m := New(nil)
	b.Run("per-record", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Routed("outbox.event.OrderCreated", 500)
		}
	})
	b.Run("per-batch-of-100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.RoutedRecords("outbox.event.OrderCreated", 100, 50000)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/record")
	})
}

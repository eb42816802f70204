package kafka

import (
	"errors"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/route"
)

type change struct {
	topic    string
	old, new int
}

// TestPartitionCountsWarn: the first count is kept, a larger one is
// adopted and reported once, a smaller one (a stale view) is ignored.
func TestPartitionCountsWarn(t *testing.T) {
	var got []change
	c := NewPartitionCounts(PartitionWarn, zerolog.Nop(), func(topic string, old, n int) { got = append(got, change{topic, old, n}) })
	for _, step := range []struct {
		topic     string
		n, placed int
	}{
		{"a", 2, 2}, {"a", 2, 2}, {"b", 1, 1}, {"a", 4, 4}, {"a", 2, 2}, {"a", 4, 4}, {"a", 6, 6},
	} {
		if p := c.place(step.topic, step.n); p != step.placed {
			t.Errorf("place(%s, %d) = %d, want %d", step.topic, step.n, p, step.placed)
		}
	}
	want := []change{{"a", 2, 4}, {"a", 4, 6}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("changes %v, want %v", got, want)
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err() = %v with warn", err)
	}
}

// TestPartitionCountsFail: after a change, records are still placed by
// the first count and Err names the change; it is reported once.
func TestPartitionCountsFail(t *testing.T) {
	n := 0
	c := NewPartitionCounts(PartitionFail, zerolog.Nop(), func(string, int, int) { n++ })
	c.Observe("a", 2)
	if err := c.Err(); err != nil {
		t.Fatalf("Err() = %v before a change", err)
	}
	c.Observe("a", 4)
	p := c.partitioner().ForTopic("a")
	for _, key := range []string{"k1", "k2", "k3", "order-17"} {
		r := &kgo.Record{Topic: "a", Key: []byte(key)}
		if got, want := p.Partition(r, 4), route.PartitionFor(r.Key, 2); got != want {
			t.Errorf("key %q placed on %d of 4, want %d (by 2)", key, got, want)
		}
	}
	c.Observe("a", 6)
	var pe *PartitionChangeError
	if err := c.Err(); !errors.As(err, &pe) || !errors.Is(err, ErrPartitionCountChanged) || *pe != (PartitionChangeError{Topic: "a", Old: 2, New: 4}) {
		t.Errorf("Err() = %v, want the change of a from 2 to 4", err)
	}
	if n != 1 {
		t.Errorf("%d changes reported, want 1", n)
	}
	if got := c.place("b", 3); got != 3 {
		t.Errorf("a new topic's first count: placed by %d, want 3", got)
	}
}

// TestPartitionCountsPlaceLikeRoute: without a change the partitioner
// places each record where route.PartitionFor does.
func TestPartitionCountsPlaceLikeRoute(t *testing.T) {
	p := NewPartitionCounts(PartitionFail, zerolog.Nop(), nil).partitioner().ForTopic("t")
	for i := range 100 {
		key := []byte{byte(i), 'k', byte(i * 7)}
		if got, want := p.Partition(&kgo.Record{Key: key}, 5), route.PartitionFor(key, 5); got != want {
			t.Fatalf("key %x: %d, want %d", key, got, want)
		}
	}
}

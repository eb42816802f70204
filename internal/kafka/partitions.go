package kafka

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/route"
)

// PartitionPolicy is what the router does when a topic it writes to
// changes its partition count (--on-partition-change).
type PartitionPolicy string

const (
	// PartitionWarn logs the change, counts it and goes on with the new
	// count: later records of a key may land on another partition.
	PartitionWarn PartitionPolicy = "warn"
	// PartitionFail stops the router before a record is placed by the new
	// count: the session ends without committing (PartitionChangeError),
	// so the checkpoint stays before every record of its open transaction.
	PartitionFail PartitionPolicy = "fail"
)

// DefaultPartitionPolicy is --on-partition-change's default.
const DefaultPartitionPolicy = PartitionWarn

// PartitionRefresh is how often the producer refreshes its metadata
// (franz-go's MetadataMaxAge, 5 minutes by default): a partition count
// change is seen by the producer at most this long after the brokers
// show it.
const PartitionRefresh = 5 * time.Second

// ErrPartitionCountChanged marks a PartitionChangeError.
var ErrPartitionCountChanged = errors.New("partition count changed")

// PartitionChangeError is a topic whose partition count changed while the
// router wrote to it with PartitionFail.
type PartitionChangeError struct {
	Topic    string
	Old, New int
}

func (e *PartitionChangeError) Error() string {
	return fmt.Sprintf("topic %q went from %d to %d partitions (--on-partition-change=fail): records of a key would land on another partition; stopped before the first record placed by the new count, the checkpoint before it; once consumers have read the topic to its end, start the router again to write with %d partitions",
		e.Topic, e.Old, e.New, e.New)
}

// Unwrap makes errors.Is(err, ErrPartitionCountChanged) true.
func (e *PartitionChangeError) Unwrap() error { return ErrPartitionCountChanged }

// PartitionCounts is the partition count of each topic the router writes
// to, shared by every producer of the process and the metadata watch. A
// topic's count is the one first seen; a different count seen later is a
// change: OnChange is told once per change, and with PartitionWarn the
// larger count is adopted (a smaller one is a stale view and ignored),
// with PartitionFail the first count stays, every record is still placed
// by it, and Err returns the change. Its methods may be called from any
// goroutine.
type PartitionCounts struct {
	policy   PartitionPolicy
	log      zerolog.Logger
	onChange func(topic string, old, new int)

	mu     sync.Mutex
	counts map[string]int
	failed atomic.Pointer[PartitionChangeError] // set once, under mu; read per record
}

// NewPartitionCounts returns empty counts; onChange, if set, is called
// once per change seen (after the WARN), outside any lock of the counts.
func NewPartitionCounts(policy PartitionPolicy, log zerolog.Logger, onChange func(topic string, old, new int)) *PartitionCounts {
	if policy == "" {
		policy = DefaultPartitionPolicy
	}
	return &PartitionCounts{policy: policy, log: log, onChange: onChange, counts: map[string]int{}}
}

// Observe reports n partitions of topic, as fresh metadata shows it.
func (c *PartitionCounts) Observe(topic string, n int) { c.place(topic, n) }

// Err returns the change that stopped the router (PartitionFail), or nil.
func (c *PartitionCounts) Err() error {
	if c == nil {
		return nil
	}
	if f := c.failed.Load(); f != nil {
		return f
	}
	return nil
}

// place records n partitions of topic and returns the count a record is
// to be placed by, at most n.
func (c *PartitionCounts) place(topic string, n int) int {
	if n <= 0 {
		return n
	}
	c.mu.Lock()
	old, known := c.counts[topic]
	switch {
	case !known:
		c.counts[topic] = n
		c.mu.Unlock()
		return n
	case old == n:
		c.mu.Unlock()
		return n
	case c.policy == PartitionWarn:
		if n < old {
			c.mu.Unlock()
			return n // a view older than the one that saw the growth
		}
		c.counts[topic] = n
		c.mu.Unlock()
		c.changed(topic, old, n)
		return n
	}
	first := c.failed.Load() == nil
	if first {
		c.failed.Store(&PartitionChangeError{Topic: topic, Old: old, New: n})
	}
	c.mu.Unlock()
	if first {
		c.changed(topic, old, n)
	}
	return min(old, n)
}

func (c *PartitionCounts) changed(topic string, old, n int) {
	ev := c.log.Warn().Str("topic", topic).Int("old_partitions", old).Int("new_partitions", n).
		Str("on_partition_change", string(c.policy))
	if c.policy == PartitionWarn {
		ev.Msg("the topic's partition count changed: later records of a key may land on another partition than its earlier ones, and consumers may see a key's events out of order around the change (docs/partitions.md); --on-partition-change=fail stops instead")
	} else {
		ev.Msg("the topic's partition count changed: stopping before the first record placed by the new count (--on-partition-change=fail; docs/partitions.md)")
	}
	if c.onChange != nil {
		c.onChange(topic, old, n)
	}
}

// partitioner is route.Partitioner placing each record by the count c
// says, so that with PartitionFail no record is placed by a new count.
func (c *PartitionCounts) partitioner() kgo.Partitioner {
	return countedPartitioner{c: c, inner: route.Partitioner()}
}

type countedPartitioner struct {
	c     *PartitionCounts
	inner kgo.Partitioner
}

func (p countedPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &countedTopic{c: p.c, topic: topic, inner: p.inner.ForTopic(topic)}
}

type countedTopic struct {
	c     *PartitionCounts
	topic string
	inner kgo.TopicPartitioner
}

var _ kgo.TopicPartitionerOnNewBatch = (*countedTopic)(nil)

func (t *countedTopic) RequiresConsistency(r *kgo.Record) bool { return t.inner.RequiresConsistency(r) }

func (t *countedTopic) Partition(r *kgo.Record, n int) int {
	return t.inner.Partition(r, t.c.place(t.topic, n))
}

func (t *countedTopic) OnNewBatch() {
	if nb, ok := t.inner.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}

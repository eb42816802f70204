package inbox

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// testConsumer is a Consumer with a client that reaches no broker: enough
// for the poll loop's bookkeeping, which only pauses and resumes fetching.
func testConsumer(t *testing.T, maxPoll, backlog int) *Consumer {
	t.Helper()
	cfg := validConfig(nil)
	cfg.MaxPollRecords, cfg.PartitionBacklog = maxPoll, backlog
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.cl, err = kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.cl.Close)
	c.base = context.Background()
	return c
}

func fetchOf(topic string, partition int32, from, n int, lso int64) kgo.Fetches {
	fp := kgo.FetchPartition{Partition: partition, HighWatermark: lso + 1, LastStableOffset: lso}
	for i := range n {
		fp.Records = append(fp.Records, &kgo.Record{Topic: topic, Partition: partition, Offset: int64(from + i)})
	}
	return kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: topic, Partitions: []kgo.FetchPartition{fp}}}}}
}

// TestEnqueueBoundsBacklogs: the poll loop queues records per partition,
// hands the partition to the workers once, pauses fetching a partition
// whose backlog could not take another poll and resumes it at half, drops
// records of partitions it does not own, and reports lag from the last
// stable offset.
func TestEnqueueBoundsBacklogs(t *testing.T) {
	c := testConsumer(t, 4, 10) // paused above 6, resumed at 3
	c.assigned(context.Background(), c.cl, map[string][]int32{"t": {0, 1}})
	p0 := c.parts[topicPartition{"t", 0}]
	paused := func() map[string][]int32 { return c.cl.PauseFetchPartitions(nil) }

	c.enqueue(fetchOf("t", 0, 0, 4, 20))
	if len(p0.backlog) != 4 || p0.state != ready || len(c.ready) != 1 || len(paused()) != 0 {
		t.Fatalf("after 4 records: backlog %d, state %v, ready %d, paused %v", len(p0.backlog), p0.state, len(c.ready), paused())
	}
	if st := c.Stats(); st.Lag != 20 {
		t.Errorf("lag %d, want 20 (last stable offset 20, next offset 0)", st.Lag)
	}
	c.enqueue(fetchOf("t", 0, 4, 4, 30))
	if len(p0.backlog) != 8 || len(c.ready) != 1 || !maps.EqualFunc(paused(), map[string][]int32{"t": {0}}, equalInts) {
		t.Fatalf("after 8 records: backlog %d, ready %d, paused %v; want 8, 1, t/0 paused", len(p0.backlog), len(c.ready), paused())
	}
	c.enqueue(fetchOf("t", 2, 0, 4, 4)) // not assigned
	c.enqueue(fetchOf("u", 0, 0, 4, 4))
	if len(c.parts) != 2 || len(c.ready) != 1 {
		t.Fatalf("records of unassigned partitions were taken: %d partitions, %d ready", len(c.parts), len(c.ready))
	}

	// A worker handles records: still paused at 4, resumed at 3.
	pop := func(n int) {
		c.mu.Lock()
		for range n {
			r := p0.backlog[0]
			p0.backlog = p0.backlog[1:]
			p0.done = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
		}
		c.updatePaused(p0)
		c.updateLag(p0)
		c.mu.Unlock()
	}
	pop(4)
	if len(paused()) != 1 {
		t.Errorf("backlog 4: resumed, want still paused until 3")
	}
	pop(1)
	if len(paused()) != 0 {
		t.Errorf("backlog 3: still paused %v", paused())
	}
	if st := c.Stats(); st.Lag != 25 {
		t.Errorf("lag %d, want 25 (last stable offset 30, next offset 5)", st.Lag)
	}
	// A failing first record pauses the partition whatever its backlog.
	c.mu.Lock()
	p0.attempt = 1
	c.updatePaused(p0)
	c.mu.Unlock()
	if len(paused()) != 1 {
		t.Errorf("retrying partition not paused")
	}

	// Losing the partitions forgets them and resumes fetching, so that a
	// later assignment fetches again.
	c.lost(context.Background(), c.cl, map[string][]int32{"t": {0, 1}})
	if len(c.parts) != 0 || len(c.ready) != 0 || len(paused()) != 0 || c.Stats().Lag != 0 {
		t.Errorf("after loss: %d partitions, %d ready, paused %v, lag %d", len(c.parts), len(c.ready), paused(), c.Stats().Lag)
	}
}

func equalInts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRunOnce: Run returns when its context ends, and a Consumer runs once.
func TestRunOnce(t *testing.T) {
	cfg := validConfig(nil)
	cfg.OnFailure = Stop // no dead-letter topic to look up
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		t.Errorf("Run: %v, want nil after its context ended", err)
	}
	if err := c.Run(context.Background()); !errors.Is(err, ErrRunTwice) {
		t.Errorf("second Run: %v, want ErrRunTwice", err)
	}
}

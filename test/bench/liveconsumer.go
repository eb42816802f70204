package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// liveConsumer is a read_committed consumer that notes when each event id
// arrives, on the same clock as the load generator.
type liveConsumer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu       sync.Mutex
	received map[string]time.Time
	count    atomic.Int64
}

func startLiveConsumer(ctx context.Context, brokers, topics []string) (*liveConsumer, error) {
	cl, err := readCommittedClient(ctx, "bench-live-consumer", brokers, topics, 100*time.Millisecond)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &liveConsumer{cl: cl, cancel: cancel, received: map[string]time.Time{}}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for ctx.Err() == nil {
			f := cl.PollFetches(ctx)
			now := time.Now()
			c.mu.Lock()
			f.EachRecord(func(r *kgo.Record) {
				for _, h := range r.Headers {
					if h.Key == "id" {
						if _, dup := c.received[string(h.Value)]; !dup {
							c.received[string(h.Value)] = now
						}
						break
					}
				}
			})
			c.mu.Unlock()
			c.count.Store(int64(len(c.received)))
		}
	}()
	return c, nil
}

// Count is the number of distinct event ids received so far.
func (c *liveConsumer) Count() int { return int(c.count.Load()) }

// ReceivedAt returns when id arrived.
func (c *liveConsumer) ReceivedAt(id string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.received[id]
	return t, ok
}

// waitCount waits until n distinct ids have arrived, or timeout.
func (c *liveConsumer) waitCount(ctx context.Context, n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for c.Count() < n {
		select {
		case <-tick.C:
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

func (c *liveConsumer) Stop() {
	c.once.Do(func() {
		c.cancel()
		c.wg.Wait()
		c.cl.Close()
	})
}

// readCommittedClient is a read_committed consumer of topics from their
// start, connected (pinged) before it is returned.
func readCommittedClient(ctx context.Context, id string, brokers, topics []string, maxWait time.Duration) (*kgo.Client, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...), kgo.ClientID(id),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(maxWait),
	)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	return cl, nil
}

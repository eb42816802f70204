package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// countWatch is a read_committed consumer that counts the records of its
// topics and notes when the first arrived and when the count reached a
// target: the end of a catch-up for a producer without a checkpoint.
type countWatch struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	count  atomic.Int64

	mu      sync.Mutex
	firstAt time.Time
	reached map[int64]time.Time // target -> when the count first reached it
	targets []int64
}

// startCountWatch starts consuming topics from their start; start it
// before the producer.
func startCountWatch(ctx context.Context, brokers, topics []string) (*countWatch, error) {
	cl, err := readCommittedClient(ctx, "bench-count", brokers, topics, 10*time.Millisecond)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &countWatch{cl: cl, cancel: cancel, reached: map[int64]time.Time{}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for ctx.Err() == nil {
			f := cl.PollFetches(ctx)
			n := int64(f.NumRecords())
			if n == 0 {
				continue
			}
			now := time.Now()
			total := w.count.Add(n)
			w.mu.Lock()
			if w.firstAt.IsZero() {
				w.firstAt = now
			}
			for _, t := range w.targets {
				if _, ok := w.reached[t]; !ok && total >= t {
					w.reached[t] = now
				}
			}
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// wait returns when the count first reached n, waiting at most timeout.
func (w *countWatch) wait(ctx context.Context, n int, timeout time.Duration) (time.Time, error) {
	target := int64(n)
	w.mu.Lock()
	w.targets = append(w.targets, target)
	if w.count.Load() >= target {
		w.reached[target] = time.Now()
	}
	w.mu.Unlock()
	deadline := time.After(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		w.mu.Lock()
		at, ok := w.reached[target]
		w.mu.Unlock()
		if ok {
			return at, nil
		}
		select {
		case <-tick.C:
		case <-deadline:
			return time.Time{}, fmt.Errorf("%d of %d records readable after %s", w.count.Load(), n, timeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// first is when the first record arrived (zero if none did).
func (w *countWatch) first() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstAt
}

// Stop ends the consumer.
func (w *countWatch) Stop() {
	w.once.Do(func() {
		w.cancel()
		w.wg.Wait()
		w.cl.Close()
	})
}

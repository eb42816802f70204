package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// firstRecordWatch is a read_committed consumer that notes when the first
// record of any of its topics becomes readable, then stops consuming.
type firstRecordWatch struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	at     time.Time // zero until a record was seen
}

// watchFirstRecord starts consuming topics from their start. Start it
// before the producer so the time is not late by a consumer's start-up.
func watchFirstRecord(ctx context.Context, brokers, topics []string) (*firstRecordWatch, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...), kgo.ClientID("bench-first-record"),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(100*time.Millisecond),
	)
	if err != nil {
		return nil, fmt.Errorf("first-record consumer: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &firstRecordWatch{cl: cl, cancel: cancel}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for ctx.Err() == nil {
			f := cl.PollRecords(ctx, 1)
			if !f.Empty() && len(f.Records()) > 0 {
				w.at = time.Now()
				return
			}
		}
	}()
	// Load metadata now, so the consumer is assigned before records exist.
	if err := cl.Ping(ctx); err != nil {
		w.Stop()
		return nil, fmt.Errorf("first-record consumer: %w", err)
	}
	return w, nil
}

// Stop ends the consumer and returns when the first record was seen (zero
// if none was).
func (w *firstRecordWatch) Stop() time.Time {
	w.once.Do(func() {
		w.cancel()
		w.wg.Wait()
		w.cl.Close()
	})
	return w.at
}

// waitFirst waits up to timeout for the first record, without stopping.
func (w *firstRecordWatch) waitFirst(timeout time.Duration) {
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		w.cancel()
		<-done
	}
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// checkpointTimes are the moments the checkpoint follower saw.
type checkpointTimes struct {
	First   time.Time // a checkpoint was first stored
	Covered time.Time // the checkpoint first covered the target position
}

// runningRouter is a router that may stop by itself: a process or an
// in-process relay.
type runningRouter interface {
	Exited() <-chan struct{}
	ExitError() error
}

// waitCheckpoint follows the checkpoint topic with a read_committed
// consumer until the checkpoint of name covers end, and notes when it
// received the first and the covering checkpoint (to a few milliseconds,
// unlike polling). It fails when the router exits, or after timeout.
func waitCheckpoint(ctx context.Context, brokers []string, topic, name string, end position,
	p runningRouter, timeout time.Duration) (checkpointTimes, error) {
	var t checkpointTimes
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ClientID("bench-checkpoint"),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(10*time.Millisecond),
		kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		return t, err
	}
	defer cl.Close()
	go func() {
		select {
		case <-p.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	last := "no checkpoint yet"
	for {
		fs := cl.PollFetches(ctx)
		now := time.Now()
		if ctx.Err() != nil {
			select {
			case <-p.Exited():
				if err := p.ExitError(); err != nil {
					return t, err
				}
				return t, fmt.Errorf("router exited before its checkpoint covered %s (%s)", end, last)
			default:
			}
			return t, fmt.Errorf("checkpoint of %q did not reach %s within %s: %s", name, end, timeout, last)
		}
		var done bool
		var perr error
		fs.EachRecord(func(r *kgo.Record) {
			if done || perr != nil || string(r.Key) != name || r.Value == nil {
				return
			}
			cp, err := checkpoint.Decode(r.Value)
			if err != nil {
				perr = fmt.Errorf("stored checkpoint of %q: %w", name, err)
				return
			}
			if t.First.IsZero() {
				t.First = now
			}
			pos, err := parsePosition(cp.GTIDSet)
			if err != nil {
				perr = fmt.Errorf("stored checkpoint of %q: %w", name, err)
				return
			}
			last = "checkpoint at " + pos.String()
			if pos.covers(end) {
				t.Covered, done = now, true
			}
		})
		if perr != nil {
			return t, perr
		}
		if done {
			return t, nil
		}
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// checkpointPoll is how often a run reads the stored checkpoint.
const checkpointPoll = 100 * time.Millisecond

// checkpointTimes are the moments a checkpoint poll saw.
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

// waitCheckpoint polls checkpoint.Load until the checkpoint of name in
// topic covers end. It fails when the router exits, or after timeout.
func waitCheckpoint(ctx context.Context, brokers []string, topic, name string, end position,
	p runningRouter, timeout time.Duration) (checkpointTimes, error) {
	var t checkpointTimes
	deadline := time.Now().Add(timeout)
	var lastErr error
	tick := time.NewTicker(checkpointPoll)
	defer tick.Stop()
	for {
		loadCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		cp, err := checkpoint.Load(loadCtx, topic, name, kgo.SeedBrokers(brokers...), kgo.ClientID("bench-checkpoint"))
		cancel()
		now := time.Now()
		switch {
		case err == nil:
			if t.First.IsZero() {
				t.First = now
			}
			pos, perr := parsePosition(cp.GTIDSet)
			if perr != nil {
				return t, fmt.Errorf("stored checkpoint of %q: %w", name, perr)
			}
			if pos.covers(end) {
				t.Covered = now
				return t, nil
			}
			lastErr = fmt.Errorf("checkpoint at %s, waiting for %s", pos, end)
		case errors.Is(err, checkpoint.ErrCheckpointMissing):
			lastErr = err
		default:
			lastErr = err // e.g. the topic does not exist yet
		}
		if now.After(deadline) {
			return t, fmt.Errorf("checkpoint of %q did not reach %s within %s: %v", name, end, timeout, lastErr)
		}
		select {
		case <-tick.C:
		case <-p.Exited():
			return t, p.ExitError()
		case <-ctx.Done():
			return t, ctx.Err()
		}
	}
}

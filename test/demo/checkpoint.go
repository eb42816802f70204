package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// checkpointTopic is the router's default --checkpoint-topic.
const checkpointTopic = "_binlog_router_checkpoints"

// waitCheckpoint polls the stored checkpoint until it reaches gtid, the
// server's GTID position after the app's last commit. The router commits
// records and checkpoint in one Kafka transaction, so this is normally
// true as soon as the records are readable.
func waitCheckpoint(ctx context.Context, brokers []string, gtid string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last string
	var lastErr error
	for {
		cp, err := kafka.LoadCheckpoint(ctx, checkpointTopic, routerName, kgo.SeedBrokers(brokers...))
		switch {
		case err == nil && cp.GTIDSet == gtid:
			return nil
		case err == nil:
			last = cp.GTIDSet
		case !errors.Is(err, checkpoint.ErrCheckpointMissing) && ctx.Err() == nil:
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("checkpoint did not reach %s within %s (stored: %q, last error: %v)", gtid, timeout, last, lastErr)
		case <-tick.C:
		}
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/relay"
	"github.com/binlog-router/binlog-router/internal/validate"
)

// TestExitCode: each cause maps to its documented exit code
// (docs/exit-codes.md), also when wrapped, and a shutdown timeout wins
// over the Kafka error it ended with.
func TestExitCode(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("running: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitOK},
		{"stopped by a signal", wrap(context.Canceled), exitOK},
		{"shutdown timeout", wrap(fmt.Errorf("%w (last error: %w)", pipeline.ErrShutdownTimeout, context.Canceled)), exitShutdownTimeout},
		{"invalid --start", wrap(checkpoint.ErrInvalidStart), exitUsage},
		{"missing outbox table", wrap(validate.ErrMissingTable), exitUsage},
		{"refused GTID set", wrap(&refusedSetError{errors.New("beyond the executed set")}), exitUsage},
		{"server setting", wrap(binlog.ErrServerConfig), exitUsage},
		{"server ignores the start position", wrap(&binlog.PositionIgnoredError{Server: "db:3306", Count: 1001}), exitUsage},
		{"purged binlog", wrap(binlog.ErrBinlogPurged), exitPurged},
		{"unfinished recover", wrap((&checkpoint.Checkpoint{Name: "r", Recovery: &checkpoint.Recovery{Table: "shop.outbox"}}).Unfinished()), exitPurged},
		{"partition count changed", wrap(&kafka.PartitionChangeError{Topic: "orders", Old: 1, New: 4}), exitPartitions},
		{"fenced", wrap(relay.ErrFenced), exitFatal},
		{"checkpoint behind", wrap(relay.ErrCheckpointBehind), exitFatal},
		{"Kafka credentials", wrap(config.ErrKafkaAuth), exitFatal},
		{"anything else", errors.New("connection refused"), exitFatal},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exitCode(%v) = %d, want %d", tc.name, tc.err, got, tc.want)
		}
	}
}

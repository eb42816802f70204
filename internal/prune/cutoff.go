package prune

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// ErrBehind means the router's checkpoint did not cover, within the wait,
// the transactions the server had committed when prune began: the router
// is stopped or behind, and no cutoff is known to be safe.
var ErrBehind = errors.New("the router's checkpoint does not cover the server's committed transactions")

// Defaults of the cutoff's flags.
const (
	// DefaultMargin is kept before the moment the checkpoint covers: a
	// row's creation time precedes its transaction's commit by as long as
	// the transaction stays open.
	DefaultMargin = 5 * time.Minute
	// DefaultCheckpointWait is how long Covered waits for the checkpoint
	// to cover the server's committed transactions: several of the
	// router's --idle-checkpoint periods.
	DefaultCheckpointWait = 30 * time.Second
)

// LoadFunc returns the router's latest committed checkpoint, or an error
// wrapping checkpoint.ErrCheckpointMissing when none is stored.
type LoadFunc func(ctx context.Context) (*checkpoint.Checkpoint, error)

// pollCheckpoint is the time between two reads of the checkpoint while
// Covered waits for it.
const pollCheckpoint = 250 * time.Millisecond

// Covered returns a moment of the server's clock such that every
// transaction the server committed before it is in the router's
// checkpoint. It reads the server's time, then its executed GTID set
// (every transaction committed before that time is in it), then the
// checkpoint, again every 250ms until the checkpoint's GTID set contains
// the executed set or wait has passed (then an error wrapping ErrBehind).
// The checkpoint's own write time is not used: a router that is behind
// writes checkpoints now for transactions committed long ago.
func Covered(ctx context.Context, db *sql.DB, load LoadFunc, wait time.Duration) (time.Time, error) {
	var micros int64
	if err := db.QueryRowContext(ctx, "SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)").Scan(&micros); err != nil {
		return time.Time{}, fmt.Errorf("reading the server's time: %w", err)
	}
	at := time.UnixMicro(micros).UTC()
	server, err := binlog.Inspect(ctx, db)
	if err != nil {
		return time.Time{}, err
	}
	deadline := time.Now().Add(wait)
	for {
		cp, err := load(ctx)
		if err != nil {
			return time.Time{}, err
		}
		set, err := gtid.Parse(server.Flavor, cp.GTIDSet)
		if err != nil {
			return time.Time{}, fmt.Errorf("checkpoint %q: %w", cp.Name, err)
		}
		if set.Contains(server.Executed) {
			return at, nil
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%w: checkpoint %q is at %q, the server had committed %q at %s, still not covered after %s; "+
				"the router is stopped or behind: run prune when it has caught up, or wait longer with --prune-checkpoint-wait",
				ErrBehind, cp.Name, cp.GTIDSet, server.Executed.String(), at.Format(time.RFC3339), wait)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(pollCheckpoint):
		}
	}
}

// Cutoff is the earlier of now - olderThan and covered - margin: rows
// created before it are deleted. covered is what Covered returned.
func Cutoff(now time.Time, olderThan time.Duration, covered time.Time, margin time.Duration) time.Time {
	c := now.Add(-olderThan)
	if m := covered.Add(-margin); m.Before(c) {
		c = m
	}
	return c.UTC()
}

// unixArg is t as the decimal seconds FROM_UNIXTIME takes, to the
// microsecond.
func unixArg(t time.Time) string {
	us := t.UnixMicro()
	sec, frac := us/1e6, us%1e6
	if frac < 0 {
		sec, frac = sec-1, frac+1e6
	}
	return fmt.Sprintf("%d.%06d", sec, frac)
}

package recovery

import (
	"context"
	"errors"
	"fmt"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
)

// errNotReached: the binlog after from caught up without covering to.
var errNotReached = errors.New("the binlog caught up before reaching the snapshot")

// committedBetween returns the event ids of the outbox rows committed in
// the transactions after from and within to (to contains from): the
// rows `run`, started at from, publishes itself. It reads src's binlog
// from from until its position contains to; it fails when the binlog
// after from is gone (purged), or caught up (a heartbeat) short of to.
func committedBetween(ctx context.Context, src pipeline.Source, from, to *gtid.Set) (*kafka.IDSet, int, error) {
	ids := kafka.NewIDSet()
	pos := from.Clone()
	if pos.Contains(to) {
		return ids, 0, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := binlog.NewQueue(4096, 16<<20)
	done := make(chan error, 1)
	go func() { done <- src.RunResume(ctx, from, binlog.Resume{}, q) }()
	defer func() {
		cancel()
		<-done
	}()
	txns := 0
	var in *binlog.Txn // the last transaction found within to
	within := func(t *binlog.Txn) (bool, error) {
		if t == in {
			return true, nil
		}
		one := gtid.New(to.Flavor())
		if t.GTID == "" {
			return false, nil // anonymous: in no GTID set
		}
		if err := one.Add(t.GTID); err != nil {
			return false, fmt.Errorf("transaction GTID from the binlog: %w", err)
		}
		if !to.Contains(one) {
			return false, nil
		}
		in = t
		return true, nil
	}
	for {
		select {
		case <-q.Ready():
		case <-ctx.Done():
			return nil, 0, context.Cause(ctx)
		}
		b, closed := q.Take()
		for i := range b.Rows {
			ok, err := within(b.Rows[i].Txn)
			if err != nil {
				return nil, 0, err
			}
			if ok {
				ids.Add(b.Rows[i].EventID)
			}
		}
		for _, t := range b.Done {
			if ok, err := within(t); err != nil {
				return nil, 0, err
			} else if ok {
				txns++
			}
			t.AddTo(pos)
		}
		heartbeat := b.Heartbeat
		q.Recycle(b)
		if pos.Contains(to) {
			return ids, txns, nil
		}
		if closed {
			return nil, 0, fmt.Errorf("reading the binlog from %s to %s: %w", from, to, q.Err())
		}
		if heartbeat {
			return nil, 0, fmt.Errorf("reading the binlog from %s to %s: %w (at %s)", from, to, errNotReached, pos)
		}
	}
}

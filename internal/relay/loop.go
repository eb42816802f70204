package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/route"
)

// ErrKafkaStalled means Kafka accepted no commit for --kafka-timeout while
// records or transactions were waiting.
var ErrKafkaStalled = errors.New("kafka accepted no commit")

// errReaderStopped means the binlog reader returned; its error is the
// cause and is reported by Run.
var errReaderStopped = errors.New("binlog reader stopped")

// loop moves batches from the reader into Kafka until ctx is cancelled
// (then it drains to a transaction boundary and commits) or an error.
func (r *Relay) loop(ctx context.Context, q *binlog.Queue) error {
	// Producing must outlive the cancellation of ctx to finish the open
	// transaction; work is cancelled only when the shutdown deadline passes.
	work, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelWork(nil)
	stopWatch := context.AfterFunc(ctx, func() {
		time.AfterFunc(r.cfg.ShutdownTimeout, func() { cancelWork(context.Canceled) })
	})
	defer stopWatch()
	// Kafka that takes nothing for KafkaTimeout while work is pending stops
	// the relay, even when it is blocked in Produce on a full buffer.
	stall := time.AfterFunc(r.cfg.KafkaTimeout, func() {
		cancelWork(fmt.Errorf("%w for %s (--kafka-timeout)", ErrKafkaStalled, r.cfg.KafkaTimeout))
	})
	defer stall.Stop()
	r.progress = func() { stall.Reset(r.cfg.KafkaTimeout) }
	fail := func(err error) error {
		if c := context.Cause(work); errors.Is(c, ErrKafkaStalled) {
			err = fmt.Errorf("%w (last error: %v)", c, err)
		}
		return r.fail(err)
	}

	tick := time.NewTicker(max(r.cfg.CommitInterval, 10*time.Millisecond))
	defer tick.Stop()
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	defer linger.Stop()
	done := ctx.Done()
	stopping := false
	for {
		b, closed := q.Take()
		if !b.Empty() {
			if err := r.handle(work, b); err != nil {
				return fail(err)
			}
			q.Recycle(b)
			if err := r.commitIf(work, r.dueCount()); err != nil {
				return fail(err)
			}
			if stopping && !r.partial {
				return r.finish(work)
			}
			continue
		}
		if closed {
			r.abort()
			return errReaderStopped
		}
		// The reader has nothing ready: commit now rather than wait, or as
		// soon as the linger since the last commit has passed.
		if wait := r.lingerLeft(); wait > 0 && r.dueIdle() {
			linger.Reset(wait)
		} else if err := r.commitIf(work, r.dueIdle()); err != nil {
			return fail(err)
		}
		if r.records == 0 && r.pendingTxns == 0 {
			r.progress() // nothing waits for Kafka
		}
		if stopping && !r.partial {
			return r.finish(work)
		}
		select {
		case <-q.Ready():
		case <-linger.C:
		case <-tick.C:
			r.cfg.Metrics.Buffered(r.cl.BufferedProduceRecords())
			if err := r.commitIf(work, r.dueTime()); err != nil {
				return fail(err)
			}
		case <-done:
			stopping, done = true, nil
			r.log.Info().Msg("stopping: finishing the current transaction")
		case <-work.Done():
			if c := context.Cause(work); errors.Is(c, ErrKafkaStalled) {
				return fail(c)
			}
			r.abort()
			return ctx.Err()
		}
	}
}

// handle produces the rows of one batch and moves the pending GTID set
// over the transactions it completes.
func (r *Relay) handle(ctx context.Context, b binlog.Batch) error {
	if b.Heartbeat {
		r.cfg.Metrics.CaughtUp()
	}
	for i := range b.Rows {
		row := &b.Rows[i]
		rec, err := r.record(row, row.Txn)
		if err != nil {
			return err
		}
		if err := r.produce(ctx, rec); err != nil {
			return err
		}
		r.cfg.Metrics.Routed(rec.Topic, len(rec.Value))
	}
	for _, t := range b.Done {
		t.AddTo(r.pending)
		r.pendingTime = t.Time
		r.pendingLayouts = t.Layouts
	}
	if len(b.Done) > 0 {
		r.pendingTxns += len(b.Done)
		r.pendingPos = b.Pos
		r.cfg.Metrics.Transactions(len(b.Done))
	}
	r.partial = b.Open
	return nil
}

// record builds the record of one row: its routed record, or by policy
// its dead-letter record, or an error that stops the relay.
func (r *Relay) record(row *binlog.OutboxRow, txn *binlog.Txn) (*kgo.Record, error) {
	rec, err := r.router.Record(row, txn)
	if err == nil {
		if size := recordSize(rec); size > r.cfg.MaxMessageBytes {
			err = tooLarge(row, txn, size, r.cfg.MaxMessageBytes)
		}
	}
	if err == nil {
		return rec, nil
	}
	var re *route.RowError
	if !errors.As(err, &re) {
		return nil, err
	}
	r.cfg.Metrics.RowError(string(re.Kind))
	if r.cfg.OnInvalid != InvalidDeadLetter {
		return nil, fmt.Errorf("%w; fix the row's writer, or run with --on-invalid=dead-letter to divert such rows to a dead-letter topic", err)
	}
	r.cfg.Metrics.DeadLetter(string(re.Kind))
	r.log.Warn().Err(re).Str("dead_letter_topic", r.cfg.DeadLetterTopic).Msg("outbox row diverted to the dead-letter topic")
	return deadLetterRecord(r.cfg.DeadLetterTopic, row, txn, re, r.cfg.MaxMessageBytes), nil
}

func (r *Relay) produce(ctx context.Context, rec *kgo.Record) error {
	if r.cfg.Delivery == ExactlyOnce && !r.inTxn {
		if err := r.cl.BeginTransaction(); err != nil {
			return err
		}
		r.inTxn = true
	}
	if r.records == 0 {
		r.since = time.Now()
	}
	r.records++
	r.events++
	r.cl.Produce(ctx, rec, r.promise)
	return nil
}

// dueCount: enough records for one Kafka transaction.
func (r *Relay) dueCount() bool {
	return !r.partial && r.records >= r.cfg.CommitRecords
}

// dueTime: the open transaction is old enough, or transactions without
// outbox rows have piled up long enough to move the checkpoint.
func (r *Relay) dueTime() bool {
	if r.partial {
		return false
	}
	if r.records > 0 {
		return time.Since(r.since) >= r.cfg.CommitInterval
	}
	return r.pendingTxns > 0 && time.Since(r.lastCheckpoint) >= r.cfg.IdleCheckpoint
}

// lingerLeft is how long an idle commit should still wait.
func (r *Relay) lingerLeft() time.Duration {
	if r.cfg.CommitLinger <= 0 {
		return 0
	}
	return r.cfg.CommitLinger - time.Since(r.lastCheckpoint)
}

// dueIdle: the reader has nothing more; commit what is open.
func (r *Relay) dueIdle() bool {
	if r.partial {
		return false
	}
	return r.records > 0 || r.dueTime()
}

func (r *Relay) commitIf(ctx context.Context, due bool) error {
	if !due || r.partial {
		return nil
	}
	return r.commit(ctx)
}

// fail aborts what is open and returns err.
func (r *Relay) fail(err error) error {
	r.abort()
	return err
}

// abort drops the open Kafka transaction (exactly-once); its records are
// never visible to read_committed consumers and the checkpoint stays.
func (r *Relay) abort() {
	if !r.inTxn {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.cl.AbortBufferedRecords(ctx); err != nil {
		r.log.Warn().Err(err).Msg("aborting buffered records")
	}
	if err := r.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		r.log.Warn().Err(err).Msg("aborting Kafka transaction")
	}
	r.inTxn = false
}

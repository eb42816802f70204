package relay

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/route"
)

// ErrKafkaStalled means Kafka accepted no commit for --kafka-timeout while
// records or transactions were waiting.
var ErrKafkaStalled = errors.New("kafka accepted no commit")

// ErrShutdownTimeout means a stop did not reach a commit within
// --shutdown-timeout: the open Kafka transaction was aborted.
var ErrShutdownTimeout = errors.New("stopping took longer than the shutdown timeout")

// loop moves batches from a binlog queue through the router into a Sink
// and commits them. It is one loop with two commit policies: the live
// relay's, where every commit writes the checkpoint that covers it (the
// Relay), and a pass's, which writes none and ends where its Pass says
// (RunPass: a replay, into a shadow session or a dry run). Both route a
// row the same way: per-topic batch limits, dead letters, refused
// timestamps.
type loop struct {
	cfg    Config
	source Source
	router *route.Router
	log    zerolog.Logger
	out    Sink // the session's Kafka side (or a dry run's printer)

	// pass, when set, decides which binlog transactions are routed and
	// where the loop ends; nil for the live relay.
	pass     Pass
	passSpec PassSpec

	at       position    // where the loop stands in the binlog
	cur      commitPoint // the commit point being filled
	overran  atomic.Bool // the stop passed ShutdownTimeout
	commits  int         // commit points in this session
	progress func()      // called when Kafka took a commit or nothing waits
	outage   *outage     // the live relay's Kafka outage, nil for a pass
	events   uint64      // records produced in this session

	ts timestampGuard // rows whose record timestamps the brokers refused
}

// run moves batches from the reader into Kafka until ctx is cancelled
// (then it stops at the next transaction boundary, or half ShutdownTimeout
// into a binlog transaction inside it, and commits: see stop) or an
// error. A pass has no graceful stop: the end of ctx aborts it, and it
// returns nil, committed, where its Pass ends it.
func (r *loop) run(ctx context.Context, q *binlog.Queue) error {
	// Producing must outlive the cancellation of ctx to finish the open
	// transaction; work is cancelled only when the shutdown deadline passes.
	// A pass is never asked to stop (its stop's channels are nil).
	work, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	st, endStop := &stop{}, func() {}
	if r.pass == nil {
		st, endStop = r.watchStop(ctx, cancelWork)
	} else {
		work, cancelWork = context.WithCancelCause(ctx)
	}
	defer cancelWork(nil)
	defer endStop()
	// Kafka that takes nothing for KafkaTimeout while work is pending stops
	// the relay, even when it is blocked in Produce on a full buffer.
	stall := time.AfterFunc(r.cfg.KafkaTimeout, func() {
		cancelWork(fmt.Errorf("%w for %s (--kafka-timeout)", ErrKafkaStalled, r.cfg.KafkaTimeout))
	})
	defer stall.Stop()
	r.progress = func() { stall.Reset(r.cfg.KafkaTimeout) }
	fail := func(err error) error {
		if c := context.Cause(work); (errors.Is(c, ErrKafkaStalled) || errors.Is(c, ErrShutdownTimeout)) && !errors.Is(err, c) {
			err = fmt.Errorf("%w (last error: %v)", c, err)
		}
		return r.fail(err)
	}
	finish := func() error {
		if err := r.finish(work); err != nil {
			return fail(err)
		}
		return nil
	}

	tick := time.NewTicker(max(r.cfg.CommitInterval, 10*time.Millisecond))
	defer tick.Stop()
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	defer linger.Stop()
	asked, cut := st.asked, st.cut // nil once seen: they only wake the idle wait
	for {
		b, closed := q.Take()
		if !b.Empty() {
			stopped, err := r.handle(work, b, st)
			if err != nil {
				return fail(err)
			}
			if stopped {
				return finish()
			}
			q.Recycle(b)
			// Under a backlog the reader is never idle: the count and the
			// age bound the Kafka transaction.
			if err := r.commitIf(work, r.dueCount() || r.dueTime()); err != nil {
				return fail(err)
			}
			select {
			case <-tick.C:
				r.cfg.Metrics.Buffered(r.out.Buffered())
			default:
			}
			if r.stopDue(st) {
				return finish()
			}
			continue
		}
		if closed {
			r.abortOn(binlog.ErrReaderStopped)
			return binlog.ErrReaderStopped
		}
		// The reader has nothing ready: commit now rather than wait, or as
		// soon as the linger since the last commit has passed.
		if wait := r.lingerLeft(); wait > 0 && r.dueIdle() {
			linger.Reset(wait)
		} else if err := r.commitIf(work, r.dueIdle()); err != nil {
			return fail(err)
		}
		if r.cur.records == 0 && r.cur.txns == 0 {
			r.progress() // nothing waits for Kafka
		}
		if r.stopDue(st) {
			return finish()
		}
		select {
		case <-q.Ready():
		case <-linger.C:
		case <-tick.C:
			r.cfg.Metrics.Buffered(r.out.Buffered())
			if err := r.commitIf(work, r.dueTime()); err != nil {
				return fail(err)
			}
		case <-asked:
			asked = nil
		case <-cut:
			cut = nil
		case <-work.Done():
			return r.fail(context.Cause(work))
		}
	}
}

// handle produces the rows of one batch and moves the pending GTID set
// over the transactions it completes. A Kafka transaction that reaches
// CommitRecords records or half the transaction timeout is committed
// before the next row, inside a binlog transaction if need be; one that
// is CommitInterval old before the first row of a binlog transaction.
//
// Before every row it asks stopDue: when the relay is to stop there, it
// returns stopped true without handling the rest of the batch, which the
// next start reads again; pending then covers exactly the rows produced.
func (r *loop) handle(ctx context.Context, b binlog.Batch, st *stop) (stopped bool, err error) {
	if b.Heartbeat {
		r.cfg.Metrics.CaughtUp()
	}
	done := 0 // b.Done[:done] are in pending
	for i := range b.Rows {
		row := &b.Rows[i]
		if !r.sameOpen(row.Txn) {
			// A new transaction: every transaction that ended before it is
			// complete.
			for done < len(b.Done) && !sameTxn(b.Done[done], row.Txn) {
				over, err := r.end(b.Done[done])
				if err != nil || over {
					return over, err
				}
				done++
			}
			v, err := r.enter(row.Txn)
			if err != nil || v == EndBefore {
				return v == EndBefore, err
			}
			r.at.open, r.at.openGTID, r.at.openRows, r.at.skip = row.Txn, row.Txn.GTID, 0, v == Skip
		}
		r.at.open = row.Txn
		if r.at.skip {
			continue
		}
		if r.dueBeforeRow() {
			if err := r.commit(ctx); err != nil {
				return false, err
			}
		}
		if r.stopDue(st) {
			r.cfg.Metrics.Transactions(done)
			return true, nil
		}
		rec, err := r.record(ctx, row, row.Txn)
		if err != nil {
			return false, err
		}
		if err := r.produce(ctx, rec); err != nil {
			return false, err
		}
		r.at.openRows++
		r.cfg.Metrics.Routed(rec.Topic, len(rec.Value))
	}
	for _, t := range b.Done[done:] {
		over, err := r.end(t)
		if err != nil || over {
			return over, err
		}
	}
	if len(b.Done) > 0 {
		r.at.binlogPos = b.Pos
		r.cfg.Metrics.Transactions(len(b.Done))
	}
	r.at.partial = b.Open
	return false, nil
}

// enter asks the pass about a transaction seen for the first time; the
// live relay routes every transaction.
func (r *loop) enter(t *binlog.Txn) (Verdict, error) {
	if r.pass == nil {
		return Include, nil
	}
	return r.pass.Enter(t)
}

// end completes a transaction that ended, entering it first when it is
// not the open one (it has no outbox rows), and reports whether the pass
// is over after it.
func (r *loop) end(t *binlog.Txn) (over bool, err error) {
	if r.pass == nil {
		r.complete(t)
		return false, nil
	}
	if !r.sameOpen(t) {
		v, err := r.pass.Enter(t)
		if err != nil || v == EndBefore {
			return v == EndBefore, err
		}
	}
	r.complete(t)
	return r.pass.Leave(t)
}

// sameOpen reports whether t is the open transaction (also when it was
// read again after a reconnect or resumed from a checkpoint).
func (r *loop) sameOpen(t *binlog.Txn) bool {
	return t == r.at.open || (t.GTID != "" && t.GTID == r.at.openGTID)
}

// sameTxn: after a reconnect the reader reads an interrupted transaction
// again as a new Txn with the same GTID.
func sameTxn(a, b *binlog.Txn) bool { return a == b || a.GTID != "" && a.GTID == b.GTID }

// complete moves the pending GTID set over a transaction that ended.
func (r *loop) complete(t *binlog.Txn) {
	t.AddTo(r.at.pending)
	r.at.sourceTime = t.Time
	r.at.layouts = t.Layouts
	r.cur.txns++
	if t.XA != nil {
		r.at.xa = t.XA.List
	}
	if r.sameOpen(t) {
		r.at.open, r.at.openGTID, r.at.openRows, r.at.skip = nil, "", 0, false
	}
}

// splittable reports whether a commit may be made now: at a transaction
// boundary, or inside a transaction with a GTID (a checkpoint can name
// the position inside it; a pass writes none, so never), or before any
// of its rows.
func (r *loop) splittable() bool {
	return !r.at.partial || r.at.openRows == 0 || r.at.openGTID != "" && r.pass == nil
}

// splitAge is the age at which an open Kafka transaction is committed
// even inside a binlog transaction: half the transaction timeout, which
// leaves the other half for the flush and EndTransaction before the
// broker would abort it.
func (r *loop) splitAge() time.Duration { return r.cfg.TransactionTimeout / 2 }

// record builds the record of one row: its routed record, or by policy
// its dead-letter record, or an error that stops the relay. A record that
// cannot fit in a batch of its topic (kafka.TopicLimits) is a row error.
func (r *loop) record(ctx context.Context, row *binlog.OutboxRow, txn *binlog.Txn) (*kgo.Record, error) {
	rec, err := r.router.Route(row, txn)
	if err == nil && r.passSpec.TopicPrefix != "" {
		rec.Topic = r.passSpec.TopicPrefix + rec.Topic
		if err := route.ValidTopic(rec.Topic); err != nil {
			return nil, fmt.Errorf("event_id %s (transaction %s): topic with --topic-prefix: %w", row.EventID, txn.GTID, err)
		}
	}
	if err == nil {
		lim, lerr := r.out.Limit(ctx, rec.Topic)
		if lerr != nil {
			return nil, lerr
		}
		if size := kafka.BatchBytes(rec); size > lim.Bytes {
			err = tooLarge(row, txn, rec.Topic, size, lim)
		}
	}
	if err == nil {
		if re := r.ts.rowError(row, txn); re != nil {
			err = re
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
		hint := "fix the row's writer, or run with --on-invalid=dead-letter to divert such rows to a dead-letter topic"
		if r.passSpec.RowErrorHint != "" {
			hint = r.passSpec.RowErrorHint
		}
		return nil, fmt.Errorf("%w; %s", err, hint)
	}
	lim, err := r.out.Limit(ctx, r.cfg.DeadLetterTopic)
	if err != nil {
		return nil, err
	}
	r.cfg.Metrics.DeadLetter(string(re.Kind))
	r.log.Warn().Err(re).Str("dead_letter_topic", r.cfg.DeadLetterTopic).Msg("outbox row diverted to the dead-letter topic")
	dl := route.DeadLetter(r.cfg.DeadLetterTopic, row, txn, re, func(rec *kgo.Record) bool { return kafka.BatchBytes(rec) <= lim.Bytes })
	if re.Kind == KindInvalidTimestamp {
		dl.Timestamp = time.Now() // the row's own would be refused again
	}
	return dl, nil
}

func (r *loop) produce(ctx context.Context, rec *kgo.Record) error {
	if r.cur.records == 0 {
		r.cur.since = time.Now()
	}
	if err := r.out.Produce(ctx, rec); err != nil {
		return err
	}
	r.cur.records++
	r.events++
	if r.pass != nil && r.out.Buffered() == 0 {
		// A dry run's sink keeps nothing for Kafka: a binlog transaction
		// it cannot commit inside is no stall.
		r.progress()
	}
	return nil
}

// dueBeforeRow: the open Kafka transaction is to be committed before the
// next row: it is full (CommitRecords) or half the transaction timeout
// old, or, at a binlog transaction boundary (no row of the next one
// produced yet), CommitInterval old. Under a backlog batches often end
// inside a binlog transaction, so the interval is checked here and not
// only at the end of a batch.
func (r *loop) dueBeforeRow() bool {
	if r.cur.records == 0 || !r.splittable() {
		return false
	}
	age := time.Since(r.cur.since)
	return r.cur.records >= r.cfg.CommitRecords || age >= r.splitAge() || r.at.openRows == 0 && age >= r.cfg.CommitInterval
}

// dueCount: enough records for one Kafka transaction.
func (r *loop) dueCount() bool {
	return r.splittable() && r.cur.records >= r.cfg.CommitRecords
}

// dueTime: the open transaction is old enough (inside a binlog
// transaction: half the transaction timeout), or transactions without
// outbox rows have piled up long enough to move the checkpoint.
func (r *loop) dueTime() bool {
	if r.at.partial {
		return r.splittable() && r.cur.records > 0 && time.Since(r.cur.since) >= r.splitAge()
	}
	if r.cur.records > 0 {
		return time.Since(r.cur.since) >= min(r.cfg.CommitInterval, r.splitAge())
	}
	return r.cur.txns > 0 && time.Since(r.cur.last) >= r.cfg.IdleCheckpoint
}

// lingerLeft is how long an idle commit should still wait.
func (r *loop) lingerLeft() time.Duration {
	if r.cfg.CommitLinger <= 0 {
		return 0
	}
	return r.cfg.CommitLinger - time.Since(r.cur.last)
}

// dueIdle: the reader has nothing more; commit what is open.
func (r *loop) dueIdle() bool {
	if r.at.partial {
		return false
	}
	return r.cur.records > 0 || r.dueTime()
}

func (r *loop) commitIf(ctx context.Context, due bool) error {
	if !due || !r.splittable() {
		return nil
	}
	return r.commit(ctx)
}

// fail aborts what is open and returns err, naming the cause when the
// broker fenced the producer: a transaction timeout or another instance.
func (r *loop) fail(err error) error {
	r.abortOn(err)
	if ferr := r.fenced(err); ferr != nil {
		return ferr
	}
	return err
}

// abortOn drops the open Kafka transaction (exactly-once) after the
// error cause; its records are never visible to read_committed consumers
// and the checkpoint stays. For a stale producer epoch the transaction is
// only forgotten (Sink.Abort).
func (r *loop) abortOn(cause error) {
	wait := 10 * time.Second
	if r.overran.Load() {
		wait = time.Second // the stop is already late; the broker aborts what is left
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r.out.Abort(ctx, cause)
}

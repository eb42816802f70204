package pipeline

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

// Loop moves batches from a binlog queue through the router into a Sink
// and commits them. It is one loop with two commit policies: the live
// router's, where every commit writes the checkpoint that covers it
// (Live, NewLive, RunSession), and a pass's, which writes none and ends
// where its Pass says (RunPass: a replay, into a shadow session or a dry
// run). Both route a row the same way: per-topic batch limits, dead
// letters, refused timestamps. A Loop is used from one goroutine.
type Loop struct {
	cfg    Config
	source Source
	router *route.Router
	log    zerolog.Logger
	out    Sink // the session's Kafka side (or a dry run's printer)

	// live is the live router's commit policy; nil for a pass.
	live *Live
	// pass, when set, decides which binlog transactions are routed and
	// where the loop ends; nil for the live router.
	pass     Pass
	passSpec PassSpec

	at       position    // where the loop stands in the binlog
	cur      commitPoint // the commit point being filled
	overran  atomic.Bool // the stop passed ShutdownTimeout
	commits  int         // commit points in this session
	progress func()      // called when Kafka took a commit or nothing waits
	events   uint64      // records produced in this session
	routed   routedTally // records of the batch being handled, for the metrics

	clock     time.Time // the time dueBeforeRow compares ages with (rowClock)
	clockRows int       // rows it may still serve before it is read again

	ts timestampGuard // rows whose record timestamps the brokers refused
}

// newLoop returns a loop of cfg (defaults applied) over source.
func newLoop(cfg Config, source Source, log zerolog.Logger) (*Loop, error) {
	cfg = cfg.WithDefaults()
	router, err := route.New(cfg.Route)
	if err != nil {
		return nil, err
	}
	l := &Loop{cfg: cfg, source: source, router: router, log: log}
	l.ts.limit = cfg.MaxBufferedRecords
	return l, nil
}

// run moves batches from the reader into Kafka until ctx is cancelled
// (then it stops at the next transaction boundary, or half ShutdownTimeout
// into a binlog transaction inside it, and commits: see stop) or an
// error. A pass has no graceful stop: the end of ctx aborts it, and it
// returns nil, committed, where its Pass ends it.
func (l *Loop) run(ctx context.Context, q *binlog.Queue) error {
	// Producing must outlive the cancellation of ctx to finish the open
	// transaction; work is cancelled only when the shutdown deadline passes.
	// A pass is never asked to stop (its stop's channels are nil).
	work, cancelWork := context.WithCancelCause(context.WithoutCancel(ctx))
	st, endStop := &stop{}, func() {}
	if l.pass == nil {
		st, endStop = l.watchStop(ctx, cancelWork)
	} else {
		work, cancelWork = context.WithCancelCause(ctx)
	}
	defer cancelWork(nil)
	defer endStop()
	// Kafka that takes nothing for KafkaTimeout while work is pending stops
	// the loop, even when it is blocked in Produce on a full buffer.
	stall := time.AfterFunc(l.cfg.KafkaTimeout, func() {
		cancelWork(fmt.Errorf("%w for %s (--kafka-timeout)", ErrKafkaStalled, l.cfg.KafkaTimeout))
	})
	defer stall.Stop()
	l.progress = func() { stall.Reset(l.cfg.KafkaTimeout) }
	fail := func(err error) error {
		if c := context.Cause(work); (errors.Is(c, ErrKafkaStalled) || errors.Is(c, ErrShutdownTimeout)) && !errors.Is(err, c) {
			err = fmt.Errorf("%w (last error: %v)", c, err)
		}
		return l.fail(err)
	}
	finish := func() error {
		if err := l.finish(work); err != nil {
			return fail(err)
		}
		return nil
	}

	tick := time.NewTicker(max(l.cfg.CommitInterval, 10*time.Millisecond))
	defer tick.Stop()
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	defer linger.Stop()
	asked, cut := st.asked, st.cut // nil once seen: they only wake the idle wait
	for {
		b, closed := q.Take()
		if !b.Empty() {
			stopped, err := l.handle(work, b, st)
			if err != nil {
				return fail(err)
			}
			if stopped {
				return finish()
			}
			q.Recycle(b)
			// Under a backlog the reader is never idle: the count and the
			// age bound the Kafka transaction.
			if err := l.commitIf(work, l.dueCount() || l.dueTime()); err != nil {
				return fail(err)
			}
			if l.stopDue(st) {
				return finish()
			}
			continue
		}
		if closed {
			l.abortOn(binlog.ErrReaderStopped)
			return binlog.ErrReaderStopped
		}
		// The reader has nothing ready: commit now rather than wait, or as
		// soon as the linger since the last commit has passed.
		if wait := l.lingerLeft(); wait > 0 && l.dueIdle() {
			linger.Reset(wait)
		} else if err := l.commitIf(work, l.dueIdle()); err != nil {
			return fail(err)
		}
		if l.cur.records == 0 && l.cur.txns == 0 {
			l.progress() // nothing waits for Kafka
		}
		if l.stopDue(st) {
			return finish()
		}
		select {
		case <-q.Ready():
		case <-linger.C:
		case <-tick.C:
			if err := l.commitIf(work, l.dueTime()); err != nil {
				return fail(err)
			}
		case <-asked:
			asked = nil
		case <-cut:
			cut = nil
		case <-work.Done():
			return l.fail(context.Cause(work))
		}
	}
}

// handle produces the rows of one batch and moves the pending GTID set
// over the transactions it completes. A Kafka transaction that reaches
// CommitRecords records or half the transaction timeout is committed
// before the next row, inside a binlog transaction if need be; one that
// is CommitInterval old before the first row of a binlog transaction.
//
// Before every row it asks stopDue: when the loop is to stop there, it
// returns stopped true without handling the rest of the batch, which the
// next start reads again; pending then covers exactly the rows produced.
func (l *Loop) handle(ctx context.Context, b binlog.Batch, st *stop) (stopped bool, err error) {
	if b.Heartbeat {
		l.cfg.Metrics.CaughtUp()
	}
	defer l.routed.flush(l.cfg.Metrics)
	l.clockRows = 0 // read the clock again at the batch's first row
	done := 0       // b.Done[:done] are in pending
	for i := range b.Rows {
		row := &b.Rows[i]
		if !l.sameOpen(row.Txn) {
			// A new transaction: every transaction that ended before it is
			// complete.
			for done < len(b.Done) && !sameTxn(b.Done[done], row.Txn) {
				over, err := l.end(b.Done[done])
				if err != nil || over {
					return over, err
				}
				done++
			}
			v, err := l.enter(row.Txn)
			if err != nil || v == EndBefore {
				return v == EndBefore, err
			}
			l.at.open, l.at.openGTID, l.at.openRows, l.at.skip = row.Txn, row.Txn.GTID, 0, v == Skip
		}
		l.at.open = row.Txn
		if l.at.skip {
			continue
		}
		if l.dueBeforeRow() {
			if err := l.commit(ctx); err != nil {
				return false, err
			}
		}
		if l.stopDue(st) {
			l.cfg.Metrics.Transactions(done)
			return true, nil
		}
		rec, err := l.emit(ctx, row, row.Txn)
		if err != nil {
			return false, err
		}
		l.at.openRows++
		l.routed.add(l.cfg.Metrics, rec.Topic, len(rec.Value))
	}
	for _, t := range b.Done[done:] {
		over, err := l.end(t)
		if err != nil || over {
			return over, err
		}
	}
	if len(b.Done) > 0 {
		l.at.binlogPos = b.Pos
		l.cfg.Metrics.Transactions(len(b.Done))
	}
	l.at.partial = b.Open
	return false, nil
}

// enter asks the pass about a transaction seen for the first time; the
// live router routes every transaction.
func (l *Loop) enter(t *binlog.Txn) (Verdict, error) {
	if l.pass == nil {
		return Include, nil
	}
	return l.pass.Enter(t)
}

// end completes a transaction that ended, entering it first when it is
// not the open one (it has no outbox rows), and reports whether the pass
// is over after it.
func (l *Loop) end(t *binlog.Txn) (over bool, err error) {
	if l.pass == nil {
		l.complete(t)
		return false, nil
	}
	if !l.sameOpen(t) {
		v, err := l.pass.Enter(t)
		if err != nil || v == EndBefore {
			return v == EndBefore, err
		}
	}
	l.complete(t)
	return l.pass.Leave(t)
}

// sameOpen reports whether t is the open transaction (also when it was
// read again after a reconnect or resumed from a checkpoint).
func (l *Loop) sameOpen(t *binlog.Txn) bool {
	return t == l.at.open || (t.GTID != "" && t.GTID == l.at.openGTID)
}

// sameTxn: after a reconnect the reader reads an interrupted transaction
// again as a new Txn with the same GTID.
func sameTxn(a, b *binlog.Txn) bool { return a == b || a.GTID != "" && a.GTID == b.GTID }

// complete moves the pending GTID set over a transaction that ended.
func (l *Loop) complete(t *binlog.Txn) {
	t.AddTo(l.at.pending)
	l.at.sourceTime = t.Time
	l.at.layouts = t.Layouts
	l.cur.txns++
	if t.XA != nil {
		l.at.xa = t.XA.List
	}
	if l.sameOpen(t) {
		l.at.open, l.at.openGTID, l.at.openRows, l.at.skip = nil, "", 0, false
	}
}

// splittable reports whether a commit may be made now: at a transaction
// boundary, or inside a transaction with a GTID (a checkpoint can name
// the position inside it; a pass writes none, so never), or before any
// of its rows.
func (l *Loop) splittable() bool {
	return !l.at.partial || l.at.openRows == 0 || l.at.openGTID != "" && l.pass == nil
}

// splitAge is the age at which an open Kafka transaction is committed
// even inside a binlog transaction: half the transaction timeout, which
// leaves the other half for the flush and EndTransaction before the
// broker would abort it.
func (l *Loop) splitAge() time.Duration { return l.cfg.TransactionTimeout / 2 }

// emit produces the record of one row and returns it: its routed
// record, or by policy its dead-letter record; or it returns an error
// that stops the loop. A record that cannot fit in a batch of its topic
// (a *kafka.TooLargeError from the sink) is a row error.
func (l *Loop) emit(ctx context.Context, row *binlog.OutboxRow, txn *binlog.Txn) (*kgo.Record, error) {
	rec, err := l.router.Route(row, txn)
	if err == nil && l.passSpec.TopicPrefix != "" {
		rec.Topic = l.passSpec.TopicPrefix + rec.Topic
		if err := route.ValidTopic(rec.Topic); err != nil {
			return nil, fmt.Errorf("event_id %s (transaction %s): topic with --topic-prefix: %w", row.EventID, txn.GTID, err)
		}
	}
	if err == nil {
		if re := l.ts.rowError(row, txn); re != nil {
			err = re
		}
	}
	if err == nil {
		if err = l.produce(ctx, rec); err == nil {
			return rec, nil // before tl, whose address errors.As takes: no allocation per row
		}
		var tl *kafka.TooLargeError
		if !errors.As(err, &tl) {
			return rec, err
		}
		err = TooLarge(row, txn, tl)
	}
	var re *route.RowError
	if !errors.As(err, &re) {
		return nil, err
	}
	l.cfg.Metrics.RowError(string(re.Kind))
	if l.cfg.OnInvalid != InvalidDeadLetter {
		hint := "fix the row's writer, or run with --on-invalid=dead-letter to divert such rows to a dead-letter topic"
		if l.passSpec.RowErrorHint != "" {
			hint = l.passSpec.RowErrorHint
		}
		return nil, fmt.Errorf("%w; %s", err, hint)
	}
	l.cfg.Metrics.DeadLetter(string(re.Kind))
	l.log.Warn().Err(re).Str("dead_letter_topic", l.cfg.DeadLetterTopic).Msg("outbox row diverted to the dead-letter topic")
	return ProduceDeadLetter(ctx, l.produce, l.cfg.DeadLetterTopic, row, txn, re)
}

func (l *Loop) produce(ctx context.Context, rec *kgo.Record) error {
	if l.cur.records == 0 {
		l.cur.since = time.Now()
	}
	if err := l.out.Produce(ctx, rec); err != nil {
		return err
	}
	l.cur.records++
	l.events++
	if l.pass != nil && l.passSpec.DryRun {
		// A dry run's sink keeps nothing for Kafka: a binlog transaction
		// it cannot commit inside is no stall.
		l.progress()
	}
	return nil
}

// dueBeforeRow: the open Kafka transaction is to be committed before the
// next row: it is full (CommitRecords) or half the transaction timeout
// old, or, at a binlog transaction boundary (no row of the next one
// produced yet), CommitInterval old. Under a backlog batches often end
// inside a binlog transaction, so the interval is checked here and not
// only at the end of a batch.
func (l *Loop) dueBeforeRow() bool {
	if l.cur.records == 0 || !l.splittable() {
		return false
	}
	if l.cur.records >= l.cfg.CommitRecords {
		return true
	}
	if l.at.openRows == 0 {
		// A binlog transaction boundary, where CommitInterval applies:
		// its age is read from the clock.
		l.clockRows = 0
	}
	age := l.rowClock().Sub(l.cur.since)
	return age >= l.splitAge() || l.at.openRows == 0 && age >= l.cfg.CommitInterval
}

// clockRows is how many rows of a batch one reading of the clock serves.
const clockRows = 16

// rowClock is the time for the age checks before a row: the clock read at
// the first row of a batch, at each binlog transaction boundary and
// otherwise every clockRows rows, not for each row (reading it cost as
// much as a tenth of routing a row). So CommitInterval, checked at
// boundaries only, is timed exactly; inside a binlog transaction a Kafka
// transaction half the transaction timeout old (30 s by default) is
// committed at most clockRows rows later, which take microseconds unless
// producing blocks on a full buffer, and then the wait is for that many
// records to be acknowledged. A reading older than the Kafka
// transaction's first record gives a negative age: not due yet.
func (l *Loop) rowClock() time.Time {
	if l.clockRows <= 0 {
		l.clock, l.clockRows = time.Now(), clockRows
	}
	l.clockRows--
	return l.clock
}

// dueCount: enough records for one Kafka transaction.
func (l *Loop) dueCount() bool {
	return l.splittable() && l.cur.records >= l.cfg.CommitRecords
}

// dueTime: the open transaction is old enough (inside a binlog
// transaction: half the transaction timeout), or transactions without
// outbox rows have piled up long enough to move the checkpoint.
func (l *Loop) dueTime() bool {
	if l.at.partial {
		return l.splittable() && l.cur.records > 0 && time.Since(l.cur.since) >= l.splitAge()
	}
	if l.cur.records > 0 {
		return time.Since(l.cur.since) >= min(l.cfg.CommitInterval, l.splitAge())
	}
	return l.cur.txns > 0 && time.Since(l.cur.last) >= l.cfg.IdleCheckpoint
}

// lingerLeft is how long an idle commit should still wait.
func (l *Loop) lingerLeft() time.Duration {
	if l.cfg.CommitLinger <= 0 {
		return 0
	}
	return l.cfg.CommitLinger - time.Since(l.cur.last)
}

// dueIdle: the reader has nothing more; commit what is open.
func (l *Loop) dueIdle() bool {
	if l.at.partial {
		return false
	}
	return l.cur.records > 0 || l.dueTime()
}

func (l *Loop) commitIf(ctx context.Context, due bool) error {
	if !due || !l.splittable() {
		return nil
	}
	return l.commit(ctx)
}

// fail aborts what is open and returns err, named by the live router
// (Live.Fenced) when the broker fenced its producer.
func (l *Loop) fail(err error) error {
	l.abortOn(err)
	if l.live != nil && l.live.Fenced != nil {
		if ferr := l.live.Fenced(err, l.cur.records, l.cur.since); ferr != nil {
			return ferr
		}
	}
	return err
}

// abortOn drops the open Kafka transaction (exactly-once) after the
// error cause; its records are never visible to read_committed consumers
// and the checkpoint stays. For a stale producer epoch the transaction is
// only forgotten (Sink.Abort).
func (l *Loop) abortOn(cause error) {
	wait := 10 * time.Second
	if l.overran.Load() {
		wait = time.Second // the stop is already late; the broker aborts what is left
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	l.out.Abort(ctx, cause)
}

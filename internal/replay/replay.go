package replay

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/route"
)

// Summary says what a replay did.
type Summary struct {
	Started      bool   // the range was resolved and checked; the fields below are meaningful
	From         string // the start position (exclusive)
	To           string // the GTID set the range ends at (inclusive)
	Records      int    // records produced (or printed) and committed
	Transactions int    // binlog transactions in the range, with or without outbox rows
	Skipped      int    // binlog transactions read past and not replayed
	// Committed is the GTID set up to which every replayed record is
	// committed: after an error, replay again from here.
	Committed string
	Reason    string // why the replay ended; "" after an error
	DryRun    bool
}

// errFinished ends the reader when the range is over.
var errFinished = errors.New("replay range finished")

// Run replays the range of cfg from reader's server (see the package
// documentation). It returns when the range is over, with everything
// committed, or with the first error, after aborting the open Kafka
// transaction; the Summary is valid in both cases.
func Run(ctx context.Context, cfg Config, reader *binlog.Reader) (Summary, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return Summary{}, err
	}
	server := reader.Server()
	b, err := newBounds(cfg.From, cfg.To, cfg.FromTime, cfg.ToTime, server.Executed)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Started: true, From: cfg.From.String(), To: b.to.String(), Committed: cfg.From.String(), DryRun: cfg.DryRun}
	if b.over() {
		sum.Reason = string(b.reason()) + " (nothing after --from-gtid)"
		return sum, nil
	}
	router, err := route.New(cfg.Route)
	if err != nil {
		return sum, err
	}
	var out sink
	if cfg.DryRun {
		out, err = newPrinter(&cfg, cfg.Out)
	} else {
		out, err = newProducer(ctx, &cfg)
	}
	if err != nil {
		return sum, err
	}
	defer out.close()

	l := &loop{cfg: &cfg, bounds: b, router: router, out: out, sum: &sum}
	q := binlog.NewQueue(cfg.QueueRows, cfg.QueueBytes)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return reader.Run(gctx, cfg.From, q) })
	g.Go(func() error {
		if err := l.run(gctx, q); err != nil {
			out.abort()
			return err
		}
		return errFinished
	})
	err = g.Wait()
	if errors.Is(err, errFinished) {
		sum.Reason = string(b.reason())
		return sum, nil
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return sum, fmt.Errorf("replay stopped after committing up to %q (replay from there to continue): %w", sum.Committed, err)
}

// loop moves the transactions of the range into the sink.
type loop struct {
	cfg    *Config
	bounds *bounds
	router *route.Router
	out    sink
	sum    *Summary

	cur     *binlog.Txn // the transaction whose rows are being read; nil between transactions
	verdict verdict     // of cur
	pending int         // records added since the last commit
	txns    int         // transactions in the range since the last commit
}

// run returns nil once the range is over and committed.
func (l *loop) run(ctx context.Context, q *binlog.Queue) error {
	for {
		b, closed := q.Take()
		if !b.Empty() {
			over, err := l.handle(ctx, b)
			if err != nil {
				return err
			}
			if over {
				return l.commit(ctx)
			}
			continue
		}
		if closed {
			return binlog.ErrReaderStopped
		}
		select {
		case <-q.Ready():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// handle walks one batch in binlog order and reports whether the range
// is over. A batch holds the rows and the ends (Done) of transactions in
// binlog order: the rows of Done[i] come before those of Done[i+1], and
// rows after the last of Done belong to a transaction that ends in a
// later batch. Transactions without outbox rows appear in Done only.
func (l *loop) handle(ctx context.Context, b binlog.Batch) (bool, error) {
	rows := b.Rows
	for _, t := range b.Done {
		n, ended, err := l.rowsOf(ctx, t, rows)
		if err != nil || ended {
			return ended, err
		}
		rows = rows[n:]
		if over, err := l.end(ctx, t); err != nil || over {
			return over, err
		}
	}
	for len(rows) > 0 {
		n, ended, err := l.rowsOf(ctx, rows[0].Txn, rows)
		if err != nil || ended {
			return ended, err
		}
		if n == 0 {
			return false, fmt.Errorf("binlog batch out of order: row of transaction %s after its end", rows[0].Txn.GTID)
		}
		rows = rows[n:]
	}
	return false, nil
}

// rowsOf enters t if it is not the open transaction, and publishes (or
// skips) the rows at the front of rows that belong to it, returning how
// many. ended: the range ended before t.
func (l *loop) rowsOf(ctx context.Context, t *binlog.Txn, rows []binlog.OutboxRow) (n int, ended bool, err error) {
	if l.cur == nil || !sameTxn(l.cur, t) {
		v, err := l.bounds.enter(t.GTID, t.Time)
		if err != nil {
			return 0, false, err
		}
		if v == stop {
			return 0, true, nil
		}
		l.cur, l.verdict = t, v
	}
	for n < len(rows) && sameTxn(rows[n].Txn, t) {
		if l.verdict == include {
			if err := l.add(ctx, &rows[n], t); err != nil {
				return n, false, err
			}
		}
		n++
	}
	return n, false, nil
}

// end closes t, which rowsOf entered, and commits when enough records
// are open.
func (l *loop) end(ctx context.Context, t *binlog.Txn) (bool, error) {
	if l.verdict == include {
		l.txns++
	} else {
		l.sum.Skipped++
	}
	l.cur = nil
	over, err := l.bounds.leave(t.GTID)
	if err != nil || over {
		return over, err
	}
	if l.pending >= l.cfg.CommitRecords {
		return false, l.commit(ctx)
	}
	return false, nil
}

// sameTxn: after a reconnect the reader reads an interrupted transaction
// again as a new Txn with the same GTID.
func sameTxn(a, b *binlog.Txn) bool { return a == b || (a.GTID != "" && a.GTID == b.GTID) }

func (l *loop) add(ctx context.Context, row *binlog.OutboxRow, txn *binlog.Txn) error {
	rec, err := l.router.Route(row, txn)
	if err != nil {
		return fmt.Errorf("%w; replay stops at a row it cannot route: give it the router's settings (--validate-json, --require-uuid, --topic-template, --contracts-dir), or replay the ranges before and after this transaction separately", err)
	}
	if l.cfg.TopicPrefix != "" {
		rec.Topic = l.cfg.TopicPrefix + rec.Topic
		if err := route.ValidTopic(rec.Topic); err != nil {
			return fmt.Errorf("event_id %s (transaction %s): topic with --topic-prefix: %w", row.EventID, txn.GTID, err)
		}
	}
	if err := l.out.add(ctx, rec); err != nil {
		return err
	}
	l.pending++
	return nil
}

// commit ends the open Kafka transaction at a binlog transaction boundary
// and moves Summary.Committed there.
func (l *loop) commit(ctx context.Context) error {
	if err := l.out.commit(ctx); err != nil {
		return err
	}
	l.sum.Records += l.pending
	l.sum.Transactions += l.txns
	l.sum.Committed = l.bounds.pos.String()
	l.pending, l.txns = 0, 0
	return nil
}

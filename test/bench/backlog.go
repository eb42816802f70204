package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// backlogSpec describes a backlog of outbox rows written before the router
// starts.
type backlogSpec struct {
	Rows         int     // outbox rows
	RowsPerTxn   int     // outbox rows per transaction (one multi-row INSERT)
	OtherPct     float64 // percent of transactions that write the non-outbox table instead
	Loaders      int     // parallel connections
	TxnsPerExec  int     // transactions per round trip
	PayloadBytes int
	Jitter       float64 // payload size spread, e.g. 0.1 for +-10%
	Aggregates   int
	Seed         uint64
	Stream       uint64 // first generator stream; loaders use Stream..Stream+Loaders
}

// backlog is what was written: the GTID positions around it and counts.
type backlog struct {
	Rows         int
	OutboxTxns   int
	OtherTxns    int
	PayloadBytes int64
	Start, End   position // @@gtid_binlog_pos before and after
	Elapsed      time.Duration
}

// loadBacklog writes spec's rows with parallel connections. The last
// transaction is an outbox transaction written after all others, so that
// End is the GTID of an outbox transaction: a router's checkpoint reaches
// End as soon as it has published it, without waiting for an idle
// checkpoint over trailing non-outbox transactions.
func loadBacklog(ctx context.Context, db *sql.DB, spec backlogSpec) (backlog, error) {
	var bl backlog
	start, err := binlogPos(ctx, db)
	if err != nil {
		return bl, err
	}
	bl.Start = start
	txns := (spec.Rows + spec.RowsPerTxn - 1) / spec.RowsPerTxn
	otherProb := spec.OtherPct / (100 - spec.OtherPct) // other txns per outbox txn
	var payload, others atomic.Int64
	began := time.Now()

	g, gctx := errgroup.WithContext(ctx)
	for w := range spec.Loaders {
		g.Go(func() error {
			gen := newEventGen(spec.Seed, spec.Stream+uint64(w), spec.Aggregates, spec.PayloadBytes, spec.Jitter)
			rng := rand.New(rand.NewPCG(spec.Seed, spec.Stream+uint64(w)+1<<32))
			conn, err := db.Conn(gctx)
			if err != nil {
				return fmt.Errorf("loader %d: connecting: %w", w, err)
			}
			defer conn.Close()
			var buf []byte
			pending := 0
			flush := func() error {
				if pending == 0 {
					return nil
				}
				if _, err := conn.ExecContext(gctx, string(buf)); err != nil {
					return fmt.Errorf("loader %d: inserting %d transactions: %w", w, pending, err)
				}
				buf, pending = buf[:0], 0
				return nil
			}
			events := make([]outboxEvent, 0, spec.RowsPerTxn)
			// The last transaction (index txns-1) is written after the group.
			for i := w; i < txns-1; i += spec.Loaders {
				if rng.Float64() < otherProb {
					buf = appendStatementSep(buf)
					buf = appendOtherInsert(buf, rng, spec.RowsPerTxn)
					pending++
					others.Add(1)
				}
				events = events[:0]
				for range spec.RowsPerTxn {
					e := gen.next()
					payload.Add(int64(len(e.Payload)))
					events = append(events, e)
				}
				buf = appendStatementSep(buf)
				buf = appendOutboxInsert(buf, events)
				pending++
				if pending >= spec.TxnsPerExec {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			return flush()
		})
	}
	if err := g.Wait(); err != nil {
		return bl, err
	}

	last := spec.Rows - (txns-1)*spec.RowsPerTxn
	gen := newEventGen(spec.Seed, spec.Stream+uint64(spec.Loaders), spec.Aggregates, spec.PayloadBytes, spec.Jitter)
	events := make([]outboxEvent, last)
	for i := range events {
		events[i] = gen.next()
		payload.Add(int64(len(events[i].Payload)))
	}
	if _, err := db.ExecContext(ctx, string(appendOutboxInsert(nil, events))); err != nil {
		return bl, fmt.Errorf("inserting the last backlog transaction: %w", err)
	}
	bl.Elapsed = time.Since(began)
	end, err := binlogPos(ctx, db)
	if err != nil {
		return bl, err
	}
	bl.End = end
	bl.Rows, bl.OutboxTxns, bl.OtherTxns, bl.PayloadBytes = spec.Rows, txns, int(others.Load()), payload.Load()
	return bl, nil
}

// loadOneTransaction writes rows outbox rows in a single transaction, in
// INSERT statements of perStatement rows.
func loadOneTransaction(ctx context.Context, db *sql.DB, rows, perStatement int, gen *eventGen) (backlog, error) {
	var bl backlog
	start, err := binlogPos(ctx, db)
	if err != nil {
		return bl, err
	}
	bl.Start = start
	began := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return bl, fmt.Errorf("beginning the large transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	events := make([]outboxEvent, 0, perStatement)
	var buf []byte
	for done := 0; done < rows; {
		n := min(perStatement, rows-done)
		events = events[:0]
		for range n {
			e := gen.next()
			bl.PayloadBytes += int64(len(e.Payload))
			events = append(events, e)
		}
		buf = appendOutboxInsert(buf[:0], events)
		if _, err := tx.ExecContext(ctx, string(buf)); err != nil {
			return bl, fmt.Errorf("inserting rows %d-%d of the large transaction: %w", done, done+n, err)
		}
		done += n
	}
	if err := tx.Commit(); err != nil {
		return bl, fmt.Errorf("committing the large transaction: %w", err)
	}
	bl.Elapsed = time.Since(began)
	if bl.End, err = binlogPos(ctx, db); err != nil {
		return bl, err
	}
	bl.Rows, bl.OutboxTxns = rows, 1
	return bl, nil
}

func appendStatementSep(b []byte) []byte {
	if len(b) > 0 {
		b = append(b, ';')
	}
	return b
}

package recovery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// A run that stopped before its end (a kill, a signal, a failed commit)
// has committed, with each of its Kafka transactions, its progress
// (checkpoint.Recovery): the first snapshot S1, the table and the last
// row (in the table's order) up to which every row of the window visible
// in S1 was handled. A run given that progress (Config.Resume) for the
// same window goes on from it:
//
//  1. It opens its own snapshot S2, which contains S1.
//  2. It reads the binlog from S1 to S2 and keeps the event ids of the
//     outbox rows committed there (committedBetween): `run`, handed over
//     at S1, publishes those itself.
//  3. It reads, in S2, the rows after the stored row (the tables before
//     it are done), and skips the ids of step 2. What remains is exactly
//     the rows visible in S1 after the stored row: outbox rows are never
//     updated, and a row visible in S2 is either visible in S1 or
//     committed between S1 and S2. A row of the window deleted between
//     S1 and S2 (retention) is not published, as it would not be by a
//     run that starts over.
//  4. It skips the ids Kafka holds, as every run does, and hands over at
//     S1: the router's checkpoint is S1, committed with its last records.
//
// When the binlog from S1 cannot be read (purged since), or the window
// differs, it reads the whole window in S2 and hands over at S2, as a
// first run does: nothing is published twice (the ids in Kafka are
// skipped), and nothing is lost (the rows committed after S1 are in S2).

// resume decides how a run given Config.Resume goes on: it returns the
// ids of the rows committed between the stored snapshot and snap (the
// run then goes on from the stored row and hands over at the stored
// snapshot), or nil when it reads the whole window again (logged, with
// the reason). An error is ctx's.
func resume(ctx context.Context, cfg *Config, flavor gtid.Flavor, snap Snapshot, log zerolog.Logger) (*kafka.IDSet, error) {
	r := cfg.Resume
	ev := log.Warn().Str("unfinished_snapshot", r.Snapshot).Str("unfinished_table", r.Table).Int64("unfinished_published", r.Published)
	if w := cfg.Window(); r.Window != w {
		ev.Str("unfinished_window", r.Window).Str("window", w).
			Msg("an unfinished recovery of another window is in the checkpoint: this one reads its whole window and hands over at its own snapshot (nothing is published twice)")
		return nil, nil
	}
	if cfg.Binlog == nil {
		ev.Msg("an unfinished recovery is in the checkpoint, but no binlog reader was given: reading the whole window again")
		return nil, nil
	}
	s1, err := gtid.Parse(flavor, r.Snapshot)
	if err != nil {
		ev.Err(err).Msg("the unfinished recovery's snapshot cannot be read: reading the whole window again")
		return nil, nil
	}
	s2, err := gtid.Parse(flavor, snap.GTID)
	if err != nil {
		return nil, fmt.Errorf("this snapshot's GTID set %q: %w", snap.GTID, err)
	}
	began := time.Now()
	ids, txns, err := committedBetween(ctx, cfg.Binlog, s1, s2)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		ev.Err(err).Msg("the binlog between the unfinished recovery's snapshot and this one cannot be read: reading the whole window again, handing over at this snapshot (nothing is published twice)")
		return nil, nil
	}
	after := "its first row"
	if len(r.After) > 0 {
		after = "key " + string(r.After)
	}
	log.Info().Str("snapshot", r.Snapshot).Str("table", r.Table).Str("after", after).Int64("published", r.Published).
		Int("transactions_since", txns).Int("rows_since", ids.Len()).Dur("binlog_read", time.Since(began)).
		Msg("going on from the unfinished recovery: the rows committed since its snapshot are left to run, which starts there")
	return ids, nil
}

// resumeAt is where table s is read from: from the stored row for the
// table being read when the run stopped, done for the tables before it.
func (p *publisher) resumeAt(s *source) (from *cursor, done bool) {
	r := p.sum.Resumed
	if r == nil || p.resumed {
		return nil, false
	}
	if s.name.String() != r.Table {
		return nil, true
	}
	p.resumed = true
	if len(r.After) == 0 {
		return nil, false
	}
	return &cursor{key: string(r.After), nullCreated: r.AfterNullCreated}, false
}

// resumable checks the row a resumed read of s goes on after. In
// created-at order the next chunk is bounded by that row's creation time,
// looked up by its key (chunkQuery): when the row is gone from this
// snapshot (deleted since: retention), s is read from its start instead,
// which stays exact (the rows handled before are in Kafka, skipped by id).
// In key order the key alone bounds it.
func (p *publisher) resumable(ctx context.Context, q querier, s *source, from *cursor) (*cursor, error) {
	if from == nil || s.order != OrderCreatedAt || from.nullCreated {
		return from, nil
	}
	var one int
	err := q.QueryRowContext(ctx, "SELECT 1 FROM "+s.name.QuotedString()+" WHERE "+schema.QuoteIdentifier(s.key)+" = ?", from.key).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		p.log.Warn().Str("table", s.name.String()).Str("after", fmt.Sprint(from.key)).
			Msg("the row the unfinished recovery stopped after is no longer in the table: reading the table from its start (the rows handled before are skipped by id)")
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("looking up the row the unfinished recovery of %s stopped after: %w", s.name, err)
	}
	return from, nil
}

// Window describes the window for Recovery.Window: its start, its
// condition, its tables and its order. Two runs go on from one another
// only when it is the same.
func (c *Config) Window() string {
	var parts []string
	if !c.Since.IsZero() {
		parts = append(parts, "since "+c.Since.UTC().Format(time.RFC3339Nano))
	}
	if c.Where != "" {
		parts = append(parts, "where "+c.Where)
	}
	tables := make([]string, len(c.Tables))
	for i, t := range c.Tables {
		tables[i] = t.String()
	}
	parts = append(parts, "tables "+strings.Join(tables, ","), "order "+string(c.Order))
	return strings.Join(parts, "; ")
}

package recovery

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// Uncovered is what a recovery cannot give of the gap after the router's
// checkpoint, for one table: rows that the window leaves out, and rows
// that the table no longer has.
type Uncovered struct {
	Table string
	// Checkpoint is when the router's checkpoint was written; Since the
	// window's start (zero: none).
	Checkpoint, Since time.Time
	// Before: rows created after the checkpoint was written and before
	// the window's start, which is later: the router had not published
	// them, and the window leaves them out. Zero when the window starts
	// before the checkpoint. The comparison is of the creation time
	// column (the database's clock) with the checkpoint's time (the
	// router's).
	Before int64
	// Oldest is the creation time of the table's oldest row, when it is
	// after the checkpoint's time: the rows created between the two, if
	// there were any, were deleted from the table. Zero otherwise.
	Oldest time.Time
}

// String says what cannot be recovered and what to do, as a person
// reads it; "" when nothing.
func (u Uncovered) String() string {
	checkpointTime, since := u.Checkpoint, u.Since
	var s string
	if u.Before > 0 {
		s = fmt.Sprintf("%d rows of %s were created after the router's checkpoint was written (%s) and before the window's start (%s): they are not recovered; widen the window with --since-checkpoint or --since %s",
			u.Before, u.Table, stamp(checkpointTime), stamp(since), stamp(checkpointTime))
	}
	if !u.Oldest.IsZero() {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("the oldest row of %s was created %s, after the router's checkpoint (written %s): rows created between the two, if there were any, were deleted from the table (retention, a dropped partition) and their binlog is purged: they cannot be recovered",
			u.Table, stamp(u.Oldest), stamp(checkpointTime))
	}
	return s
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// uncovered compares the gap after the checkpoint written at cpTime with
// what the table and the window give, inside the snapshot of q. It needs
// the creation time column; without it, or without cpTime, it reports
// nothing. The oldest row is looked up only with an index that begins
// with that column: without one it would read the table.
func (s *source) uncovered(ctx context.Context, q querier, cpTime, since time.Time) (Uncovered, error) {
	u := Uncovered{Table: s.name.String(), Checkpoint: cpTime, Since: since}
	if cpTime.IsZero() || s.createdAt == "" {
		return u, nil
	}
	col := schema.QuoteIdentifier(s.createdAt)
	if !since.IsZero() && since.After(cpTime) {
		lo, loArg := s.timeSQL(cpTime)
		hi, hiArg := s.timeSQL(since)
		err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+s.name.QuotedString()+" WHERE "+col+" >= "+lo+" AND "+col+" < "+hi, loArg, hiArg).Scan(&u.Before)
		if err != nil {
			return u, fmt.Errorf("counting the rows of %s before the window: %w", s.name, err)
		}
	}
	if indexed, err := s.createdIndexed(ctx, q); err != nil || !indexed {
		return u, err
	}
	var oldest sql.NullString
	if err := q.QueryRowContext(ctx, "SELECT "+s.createdSelect()+" FROM "+s.name.QuotedString()+" WHERE "+col+" IS NOT NULL ORDER BY "+col+" LIMIT 1").Scan(&oldest); err != nil && err != sql.ErrNoRows {
		return u, fmt.Errorf("reading the oldest row of %s: %w", s.name, err)
	}
	if oldest.Valid {
		t, err := s.parseCreated(oldest.String)
		if err != nil {
			return u, fmt.Errorf("reading the oldest row of %s: %w", s.name, err)
		}
		if t.After(cpTime) {
			u.Oldest = t
		}
	}
	return u, nil
}

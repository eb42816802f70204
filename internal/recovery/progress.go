package recovery

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// keyProgress estimates how much of one table's window is left from its
// primary key: the window's rows are taken to be spread evenly over the
// keys from the first one read to the largest key in the snapshot
// (SELECT MAX(key), one index lookup). That holds for an AUTO_INCREMENT
// key and a time window, whose later rows are all in it; with --where
// the rows matching may be sparse, and the rows left are then
// overestimated, while the time left, also proportional to the keys
// still to scan, holds. A key that is not an integer gives no estimate,
// nor do the tables after the one being read.
//
// In created-at order the same estimate is made over the creation times
// (in microseconds, cursor.position), from the first one read to the
// largest in the snapshot, which is read only when an index begins with
// the column (else it would scan the table: no estimate). That holds
// for rows spread evenly over time; a burst still to read makes it low.
type keyProgress struct {
	ok         bool  // integer keys, and the largest read
	first, max int64 // the first key read (once read), the largest in the snapshot
	started    bool
	rows       int64 // rows of this table read
	begin      time.Time
}

// newKeyProgress reads the largest key of s in the snapshot, or in
// created-at order the largest creation time when indexed says an index
// begins with its column.
func newKeyProgress(ctx context.Context, q querier, s *source, indexed bool) (*keyProgress, error) {
	kp := &keyProgress{begin: time.Now()}
	if s.order == OrderCreatedAt {
		if !indexed {
			return kp, nil
		}
		var v sql.NullString
		c := schema.QuoteIdentifier(s.createdAt)
		if s.createdAtType == "timestamp" {
			c = "UNIX_TIMESTAMP(MAX(" + c + "))"
		} else {
			c = "CAST(MAX(" + c + ") AS CHAR)"
		}
		if err := q.QueryRowContext(ctx, "SELECT "+c+" FROM "+s.name.QuotedString()).Scan(&v); err != nil {
			return nil, fmt.Errorf("reading the largest creation time of %s: %w", s.name, err)
		}
		if t, err := s.parseCreated(v.String); err == nil && v.Valid && !t.IsZero() {
			kp.max, kp.ok = t.UnixMicro(), true
		}
		return kp, nil
	}
	var v sql.NullString
	if err := q.QueryRowContext(ctx, "SELECT MAX("+schema.QuoteIdentifier(s.key)+") FROM "+s.name.QuotedString()).Scan(&v); err != nil {
		return nil, fmt.Errorf("reading the largest key of %s: %w", s.name, err)
	}
	if m, err := strconv.ParseInt(v.String, 10, 64); err == nil && v.Valid {
		kp.max, kp.ok = m, true
	}
	return kp, nil
}

// read notes a chunk of n rows of the table whose first key read is
// first (as the driver gives it).
func (kp *keyProgress) read(first any, n int64) {
	kp.rows += n
	if !kp.ok || n == 0 {
		return
	}
	if !kp.started {
		f, err := strconv.ParseInt(fmt.Sprint(first), 10, 64)
		if err != nil {
			kp.ok = false
			return
		}
		kp.first, kp.started = f, true
	}
}

// left estimates the rows and time left of the table after key last;
// ok is false without an estimate.
func (kp *keyProgress) left(last any) (rows int64, d time.Duration, ok bool) {
	if !kp.ok || !kp.started || kp.max <= kp.first {
		return 0, 0, false
	}
	l, err := strconv.ParseInt(fmt.Sprint(last), 10, 64)
	if err != nil || l <= kp.first {
		return 0, 0, false
	}
	done := float64(l-kp.first) / float64(kp.max-kp.first)
	if done >= 1 {
		return 0, 0, true
	}
	rest := (1 - done) / done
	return int64(float64(kp.rows) * rest), time.Duration(float64(time.Since(kp.begin)) * rest), true
}

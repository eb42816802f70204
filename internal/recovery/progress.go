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
type keyProgress struct {
	ok         bool  // integer keys, and the largest read
	first, max int64 // the first key read (once read), the largest in the snapshot
	started    bool
	rows       int64 // rows of this table read
	begin      time.Time
}

// newKeyProgress reads the largest key of s in the snapshot.
func newKeyProgress(ctx context.Context, q querier, s *source) (*keyProgress, error) {
	kp := &keyProgress{begin: time.Now()}
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

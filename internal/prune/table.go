package prune

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// ErrNoCreatedAt means the outbox table's rows carry no creation time
// prune could compare with the cutoff.
var ErrNoCreatedAt = errors.New("no created-at column")

// target is one outbox table as prune deletes from it: the column its
// batches walk (the first column of the primary key) and the creation
// time compared with the cutoff.
type target struct {
	name      schema.TableName
	key       string // first primary key column
	createdAt string // creation time column
	// cutoffSQL is the expression the cutoff argument (cutoffArg) is
	// compared through.
	cutoffSQL string
	cutoffArg string
}

// inspect finds the primary key and checks the created-at column of
// table. zone is the time zone of a DATETIME created-at column; nil for
// the server's time_zone.
func inspect(ctx context.Context, db *sql.DB, table schema.TableName, createdAt string, cutoff time.Time, zone *time.Location) (target, error) {
	t := target{name: table, createdAt: createdAt}
	if createdAt == "" {
		return t, fmt.Errorf("outbox table %s: %w is mapped (--column-created-at is empty); prune compares each row's creation time with the cutoff: map a TIMESTAMP or DATETIME column with --column-created-at", table, ErrNoCreatedAt)
	}
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, table.Database, table.Table)
	if err != nil {
		return t, fmt.Errorf("reading the primary key of %s: %w", table, err)
	}
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return t, fmt.Errorf("reading the primary key of %s: %w", table, err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t, fmt.Errorf("reading the primary key of %s: %w", table, err)
	}
	if len(keys) == 0 {
		return t, fmt.Errorf("outbox table %s: no primary key visible to the prune user; it deletes in primary key order: add one, and grant the prune user SELECT, DELETE on the table (docs/retention.md)", table)
	}
	t.key = keys[0]
	var dataType string
	err = db.QueryRowContext(ctx, `SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?`,
		table.Database, table.Table, createdAt).Scan(&dataType)
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("outbox table %s: %w: column %q does not exist; set --column-created-at to its creation time column", table, ErrNoCreatedAt, createdAt)
	}
	if err != nil {
		return t, fmt.Errorf("reading column %q of %s: %w", createdAt, table, err)
	}
	switch strings.ToLower(dataType) {
	case "timestamp":
		// FROM_UNIXTIME gives the session's time zone, in which the
		// server also shows TIMESTAMP values: the comparison is exact.
		t.cutoffSQL, t.cutoffArg = "FROM_UNIXTIME(?)", unixArg(cutoff)
	case "datetime":
		if zone == nil {
			// A DATETIME in the server's time_zone, the session's default.
			t.cutoffSQL, t.cutoffArg = "FROM_UNIXTIME(?)", unixArg(cutoff)
		} else {
			t.cutoffSQL, t.cutoffArg = "?", cutoff.In(zone).Format("2006-01-02 15:04:05.999999")
		}
	default:
		return t, fmt.Errorf("outbox table %s: %w: column %q is %s; prune needs a TIMESTAMP or DATETIME creation time (--column-created-at)", table, ErrNoCreatedAt, createdAt, dataType)
	}
	return t, nil
}

// batchEnd returns the key of the last of the next at most n rows after
// from (all rows when from is nil) created before the cutoff, in key
// order; nil when there is none. MariaDB allows no LIMIT in an IN
// subquery, so the batch is bounded by its highest key instead.
func (t target) batchEnd(ctx context.Context, db *sql.DB, from any, n int) (any, error) {
	key, ca := schema.QuoteIdentifier(t.key), schema.QuoteIdentifier(t.createdAt)
	where, args := ca+" < "+t.cutoffSQL, []any{t.cutoffArg}
	if from != nil {
		where, args = key+" > ? AND "+where, []any{from, t.cutoffArg}
	}
	q := "SELECT MAX(k) FROM (SELECT " + key + " AS k FROM " + t.name.QuotedString() + " WHERE " + where + " ORDER BY " + key + " LIMIT ?) AS batch"
	var end any
	if err := db.QueryRowContext(ctx, q, append(args, n)...).Scan(&end); err != nil {
		return nil, fmt.Errorf("selecting a batch of %s: %w", t.name, err)
	}
	return end, nil
}

// deleteBatch deletes the rows with a key after from (any when nil) up to
// end that were created before the cutoff, in one autocommit statement.
func (t target) deleteBatch(ctx context.Context, db *sql.DB, from, end any) (int64, error) {
	key, ca := schema.QuoteIdentifier(t.key), schema.QuoteIdentifier(t.createdAt)
	where, args := key+" <= ? AND "+ca+" < "+t.cutoffSQL, []any{end, t.cutoffArg}
	if from != nil {
		where, args = key+" > ? AND "+where, []any{from, end, t.cutoffArg}
	}
	res, err := db.ExecContext(ctx, "DELETE FROM "+t.name.QuotedString()+" WHERE "+where, args...)
	if err != nil {
		return 0, fmt.Errorf("deleting a batch of %s: %w", t.name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("deleting a batch of %s: %w", t.name, err)
	}
	return n, nil
}

// count returns how many rows were created before the cutoff.
func (t target) count(ctx context.Context, db *sql.DB) (int64, error) {
	var n int64
	q := "SELECT COUNT(*) FROM " + t.name.QuotedString() + " WHERE " + schema.QuoteIdentifier(t.createdAt) + " < " + t.cutoffSQL
	if err := db.QueryRowContext(ctx, q, t.cutoffArg).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the rows of %s before the cutoff: %w", t.name, err)
	}
	return n, nil
}

package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Dialect is the SQL dialect of the inbox table's database.
type Dialect int

const (
	// MySQL is MySQL or MariaDB through github.com/go-sql-driver/mysql.
	MySQL Dialect = iota + 1
	// PostgreSQL is PostgreSQL through github.com/jackc/pgx/v5/stdlib.
	PostgreSQL
)

func (d Dialect) String() string {
	switch d {
	case MySQL:
		return "mysql"
	case PostgreSQL:
		return "postgresql"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// DefaultTable is the inbox table's default name.
const DefaultTable = "inbox"

// identRe is what a table name part may contain; names are quoted anyway.
var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}$`)

// quoteTable quotes "table" or "schema.table" for d.
func quoteTable(d Dialect, name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("inbox table %q: want table or schema.table", name)
	}
	q := "`"
	if d == PostgreSQL {
		q = `"`
	}
	for i, p := range parts {
		if !identRe.MatchString(p) {
			return "", fmt.Errorf("inbox table %q: %q is not a plain identifier (letters, digits, _ and $, not starting with a digit)", name, p)
		}
		parts[i] = q + p + q
	}
	return strings.Join(parts, "."), nil
}

// DDL returns the CREATE TABLE statement of the inbox table for d. The
// primary key (consumer_name, event_id) is what makes a redelivery a
// duplicate; consumed_at is what Prune deletes by.
func DDL(d Dialect, table string) (string, error) {
	if table == "" {
		table = DefaultTable
	}
	qt, err := quoteTable(d, table)
	if err != nil {
		return "", err
	}
	switch d {
	case MySQL:
		return "CREATE TABLE IF NOT EXISTS " + qt + ` (
  consumer_name VARCHAR(255) NOT NULL,
  event_id      VARCHAR(255) NOT NULL,
  consumed_at   TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (consumer_name, event_id),
  KEY consumed_at (consumed_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`, nil
	case PostgreSQL:
		// The index lives in the table's schema; it is named after the
		// table alone.
		name := table
		if i := strings.LastIndex(table, "."); i >= 0 {
			name = table[i+1:]
		}
		idx, err := quoteTable(d, name+"_consumed_at")
		if err != nil {
			return "", fmt.Errorf("inbox table %q: its index name %q is not valid (at most 63 characters): %w", table, name+"_consumed_at", err)
		}
		return "CREATE TABLE IF NOT EXISTS " + qt + ` (
  consumer_name TEXT NOT NULL,
  event_id      TEXT NOT NULL,
  consumed_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer_name, event_id)
);
CREATE INDEX IF NOT EXISTS ` + idx + " ON " + qt + " (consumed_at)", nil
	}
	return "", fmt.Errorf("inbox: unknown dialect %v", d)
}

// CreateTable executes DDL(d, table) on db, one statement at a time.
func CreateTable(ctx context.Context, db *sql.DB, d Dialect, table string) error {
	ddl, err := DDL(d, table)
	if err != nil {
		return err
	}
	for _, stmt := range strings.Split(ddl, ";\n") {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("creating inbox table %s: %w", table, err)
		}
	}
	return nil
}

// statements are the SQL texts of one dialect and table.
type statements struct {
	table  string // unquoted table name without schema
	insert string // args: consumer_name, event_id
	prune  string // args: consumer_name, age in microseconds, limit
}

func newStatements(d Dialect, table, qt string) statements {
	if i := strings.LastIndex(table, "."); i >= 0 {
		table = table[i+1:]
	}
	if d == PostgreSQL {
		return statements{
			table: table,
			// Targets exactly the primary key: any other unique violation
			// is still an error.
			insert: "INSERT INTO " + qt + " (consumer_name, event_id) VALUES ($1, $2) ON CONFLICT (consumer_name, event_id) DO NOTHING",
			prune: "DELETE FROM " + qt + " WHERE ctid IN (SELECT ctid FROM " + qt +
				" WHERE consumer_name = $1 AND consumed_at < now() - $2 * interval '1 microsecond' LIMIT $3)",
		}
	}
	return statements{
		table:  table,
		insert: "INSERT INTO " + qt + " (consumer_name, event_id) VALUES (?, ?)",
		prune:  "DELETE FROM " + qt + " WHERE consumer_name = ? AND consumed_at < NOW(6) - INTERVAL ? MICROSECOND LIMIT ?",
	}
}

// insertInbox inserts the inbox row in tx and reports whether it was
// already there. Only a conflict on the primary key is a duplicate; every
// other error is returned.
func insertInbox(ctx context.Context, tx *sql.Tx, d Dialect, st statements, consumer, eventID string) (duplicate bool, err error) {
	res, err := tx.ExecContext(ctx, st.insert, consumer, eventID)
	if err != nil {
		if d == MySQL && isMySQLPrimaryKeyConflict(err, st.table) {
			return true, nil
		}
		return false, fmt.Errorf("inserting inbox row: %w", err)
	}
	if d == PostgreSQL {
		n, err := res.RowsAffected()
		if err != nil {
			return false, fmt.Errorf("inserting inbox row: %w", err)
		}
		return n == 0, nil
	}
	return false, nil
}

// isMySQLPrimaryKeyConflict reports whether err is MySQL/MariaDB error 1062
// (ER_DUP_ENTRY) on the key named PRIMARY: "Duplicate entry '...' for key
// 'PRIMARY'" (MariaDB, MySQL 5.7) or "... for key 'inbox.PRIMARY'" (MySQL
// 8). A duplicate on another unique key is not a duplicate event. Names
// compare case-insensitively: with lower_case_table_names the server
// reports the table name in its stored case, not as configured.
func isMySQLPrimaryKeyConflict(err error, table string) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1062 {
		return false
	}
	const marker = " for key '"
	i := strings.LastIndex(me.Message, marker)
	if i < 0 || i+len(marker) >= len(me.Message) || !strings.HasSuffix(me.Message, "'") {
		return false
	}
	key := me.Message[i+len(marker) : len(me.Message)-1]
	return strings.EqualFold(key, "PRIMARY") || strings.EqualFold(key, table+".PRIMARY")
}

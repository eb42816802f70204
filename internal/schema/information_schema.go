package schema

import (
	"context"
	"database/sql"
	"fmt"
)

// columnsQuery lists a table's columns in ordinal order. ORDINAL_POSITION is
// the order of the columns in a row image, invisible columns included.
const columnsQuery = `SELECT COLUMN_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION`

// TableColumns reads the column names of database.table in ordinal order
// from information_schema.COLUMNS. Callers use it when the server does not
// log column names (binlog_row_metadata != FULL) and after DDL touching an
// outbox table; the result feeds Columns.Resolve.
//
// A table that does not exist, or that the user has no privilege on (the
// server hides it then), is ErrTableNotFound wrapped with the table name.
// The answer reflects the table's definition now, which is newer than the
// binlog being read whenever DDL happened since; that is the caller's to
// reconcile.
func TableColumns(ctx context.Context, db *sql.DB, database, table string) ([]string, error) {
	name := TableName{Database: database, Table: table}
	rows, err := db.QueryContext(ctx, columnsQuery, database, table)
	if err != nil {
		return nil, fmt.Errorf("reading columns of %s: %w", name, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("reading columns of %s: %w", name, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading columns of %s: %w", name, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("reading columns of %s: %w; create it (binlog-router schema prints the DDL), grant the router's user SELECT on it, or fix --outbox-table", name, ErrTableNotFound)
	}
	return names, nil
}

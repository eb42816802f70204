package binlog

import (
	"context"
	"database/sql"
	"strings"
)

// QueryRows runs q on the source server and returns its rows, each a map
// from the lower-cased column name to the value (NULL as ""). It is the
// one way the router reads SHOW statements (SHOW BINARY LOGS, SHOW
// BINLOG EVENTS, SHOW SLAVE HOSTS, SHOW PROCESSLIST), whose columns
// differ between MySQL and MariaDB and between versions.
func QueryRows(ctx context.Context, db *sql.DB, q string) ([]map[string]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	for i, c := range cols {
		cols[i] = strings.ToLower(c)
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make(map[string]string, len(cols))
		for i, c := range cols {
			row[c] = vals[i].String
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

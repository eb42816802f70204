package binlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// OldestMariaDB returns the oldest binlog file a MariaDB server still has
// and the GTID position before it (from the file's Gtid_list event). A
// replica can start there: a position before it was purged.
func OldestMariaDB(ctx context.Context, db *sql.DB) (file string, before *gtid.Set, err error) {
	logs, err := firstColumn(ctx, db, "SHOW BINARY LOGS", "Log_name")
	if err != nil {
		return "", nil, err
	}
	if len(logs) == 0 {
		return "", nil, errors.New("SHOW BINARY LOGS lists no binlog")
	}
	file = logs[0]
	q := "SHOW BINLOG EVENTS IN '" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(file) + "' LIMIT 5"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", nil, err
	}
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", nil, err
		}
		row := map[string]string{}
		for i, c := range cols {
			row[c] = vals[i].String
		}
		if row["Event_type"] == "Gtid_list" {
			before, err := ParseGTIDList(row["Info"])
			if err != nil {
				return "", nil, fmt.Errorf("Gtid_list event of %s: %w", file, err)
			}
			return file, before, nil
		}
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	return "", nil, fmt.Errorf("no Gtid_list event among the first events of %s", file)
}

// ParseGTIDList parses the Info of a MariaDB Gtid_list event, "[]" or
// "[0-1-5,0-2-9,1-1-3]". The list holds the last GTID of each (domain,
// server id) logged before the file, with the domain's most recent one
// last, so for a domain listed more than once the later entry wins.
func ParseGTIDList(info string) (*gtid.Set, error) {
	s := strings.TrimSpace(info)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("unexpected Gtid_list %q: want [domain-server-seq,...]", info)
	}
	set := gtid.New(gtid.MariaDB)
	for _, g := range strings.Split(s[1:len(s)-1], ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		if err := set.Add(g); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// firstColumn returns the values of column name of a query's rows (the
// first column when the name is absent).
func firstColumn(ctx context.Context, db *sql.DB, q, name string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	idx := 0
	for i, c := range cols {
		if strings.EqualFold(c, name) {
			idx = i
		}
	}
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals[idx].String)
	}
	return out, rows.Err()
}

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
	logs, err := QueryRows(ctx, db, "SHOW BINARY LOGS")
	if err != nil {
		return "", nil, fmt.Errorf("SHOW BINARY LOGS: %w", err)
	}
	if len(logs) == 0 {
		return "", nil, errors.New("SHOW BINARY LOGS lists no binlog")
	}
	file = logs[0]["log_name"]
	q := "SHOW BINLOG EVENTS IN '" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(file) + "' LIMIT 5"
	events, err := QueryRows(ctx, db, q)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", q, err)
	}
	for _, e := range events {
		if e["event_type"] == "Gtid_list" {
			before, err := ParseGTIDList(e["info"])
			if err != nil {
				return "", nil, fmt.Errorf("Gtid_list event of %s: %w", file, err)
			}
			return file, before, nil
		}
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

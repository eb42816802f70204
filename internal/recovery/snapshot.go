package recovery

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// Snapshot is the binlog position of a consistent read: every transaction
// the read sees is in GTID, and none after it.
type Snapshot struct {
	Flavor   gtid.Flavor
	File     string // binlog file of the position ("" when the server does not say)
	Position uint64 // offset in File
	GTID     string // the GTID set at the position, in the server's syntax
}

// begin starts a consistent-snapshot transaction on conn and returns its
// binlog position. The transaction stays open on conn: every read on conn
// until it ends sees the snapshot.
//
// MariaDB: START TRANSACTION WITH CONSISTENT SNAPSHOT sets the status
// variables binlog_snapshot_file and binlog_snapshot_position to the
// binlog position of exactly that snapshot (no lock), and
// BINLOG_GTID_POS turns it into the GTID position.
//
// MySQL 8 has no such variables: commits are blocked (FLUSH TABLES WITH
// READ LOCK, which needs RELOAD) while the snapshot starts and
// performance_schema.log_status (which needs BACKUP_ADMIN) is read, then
// released (UNLOCK TABLES), as mysqldump --single-transaction
// --source-data does with SHOW MASTER STATUS.
func begin(ctx context.Context, conn *sql.Conn, flavor gtid.Flavor) (Snapshot, error) {
	s := Snapshot{Flavor: flavor}
	if flavor == gtid.MariaDB {
		if _, err := conn.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
			return s, fmt.Errorf("starting the consistent snapshot: %w", err)
		}
		var pos string
		if err := conn.QueryRowContext(ctx, "SHOW STATUS LIKE 'binlog_snapshot_file'").Scan(new(string), &s.File); err != nil {
			return s, fmt.Errorf("reading binlog_snapshot_file: %w", err)
		}
		if err := conn.QueryRowContext(ctx, "SHOW STATUS LIKE 'binlog_snapshot_position'").Scan(new(string), &pos); err != nil {
			return s, fmt.Errorf("reading binlog_snapshot_position: %w", err)
		}
		p, err := strconv.ParseUint(pos, 10, 64)
		if err != nil || s.File == "" {
			return s, fmt.Errorf("the server gave no binlog position for the snapshot (binlog_snapshot_file %q, binlog_snapshot_position %q): is log_bin on?", s.File, pos)
		}
		s.Position = p
		var g sql.NullString
		if err := conn.QueryRowContext(ctx, "SELECT BINLOG_GTID_POS(?, ?)", s.File, s.Position).Scan(&g); err != nil {
			return s, fmt.Errorf("reading the GTID position of %s:%d: %w", s.File, s.Position, err)
		}
		if !g.Valid {
			return s, fmt.Errorf("BINLOG_GTID_POS(%q, %d) is NULL: the server no longer has that binlog", s.File, s.Position)
		}
		s.GTID = g.String
		return s, nil
	}
	if _, err := conn.ExecContext(ctx, "FLUSH TABLES WITH READ LOCK"); err != nil {
		return s, fmt.Errorf("blocking commits while the snapshot starts (FLUSH TABLES WITH READ LOCK needs the RELOAD privilege): %w", err)
	}
	unlocked := false
	defer func() {
		if !unlocked {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "UNLOCK TABLES")
		}
	}()
	if _, err := conn.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
		return s, fmt.Errorf("starting the consistent snapshot: %w", err)
	}
	var local string
	if err := conn.QueryRowContext(ctx, "SELECT LOCAL FROM performance_schema.log_status").Scan(&local); err != nil {
		return s, fmt.Errorf("reading performance_schema.log_status (needs BACKUP_ADMIN): %w", err)
	}
	if _, err := conn.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		return s, fmt.Errorf("unlocking tables after the snapshot started: %w", err)
	}
	unlocked = true
	file, pos, set, err := parseLogStatus(local)
	if err != nil {
		return s, err
	}
	s.File, s.Position, s.GTID = file, pos, set
	return s, nil
}

// parseLogStatus reads the LOCAL column of MySQL's
// performance_schema.log_status: {"gtid_executed": "...",
// "binary_log_file": "...", "binary_log_position": n}. The GTID set's
// line breaks are removed.
func parseLogStatus(local string) (file string, pos uint64, set string, err error) {
	var v struct {
		GTIDExecuted *string `json:"gtid_executed"`
		File         string  `json:"binary_log_file"`
		Position     uint64  `json:"binary_log_position"`
	}
	if err := json.Unmarshal([]byte(local), &v); err != nil {
		return "", 0, "", fmt.Errorf("reading performance_schema.log_status's LOCAL %q: %w", local, err)
	}
	if v.GTIDExecuted == nil {
		return "", 0, "", errors.New("performance_schema.log_status has no gtid_executed: is gtid_mode ON?")
	}
	set = strings.NewReplacer("\n", "", "\r", "", " ", "").Replace(*v.GTIDExecuted)
	return v.File, v.Position, set, nil
}

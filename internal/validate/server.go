package validate

import (
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// Server variables read beyond binlog.Inspect's; absent from the map when
// the server does not have them.
const (
	varEnforceGTID       = "enforce_gtid_consistency"      // MySQL
	varStrictMode        = "gtid_strict_mode"              // MariaDB
	varExpireSeconds     = "binlog_expire_logs_seconds"    // MySQL 8, MariaDB 10.6
	varExpireDays        = "expire_logs_days"              // MySQL 5.7/8.0, MariaDB
	varExpireAutoPurge   = "binlog_expire_logs_auto_purge" // MySQL 8.0.29
	varMaxBinlogTotal    = "max_binlog_total_size"         // MariaDB 11.4
	varSlavesNeededPurge = "slave_connections_needed_for_purge"
)

// extraVars are read with SELECT @@global.<name>, one at a time, so that
// one the server lacks does not hide the others.
var extraVars = []string{varEnforceGTID, varStrictMode, varExpireSeconds, varExpireDays,
	varExpireAutoPurge, varMaxBinlogTotal, varSlavesNeededPurge}

// myCnf says where a setting must also go so that it survives a restart.
const myCnf = "and put it in the server's option file ([mysqld] in my.cnf) so it survives a restart"

// checkServer reports the version and flavor, and fails for servers
// without GTIDs and for a --server-id equal to the server's own.
func checkServer(s *binlog.Server, v version, addr, user string, routerID uint32) Check {
	const name = "server"
	flavor := "MySQL"
	if s.Flavor == gtid.MariaDB {
		flavor = "MariaDB"
	}
	detail := fmt.Sprintf("%s %s at %s as %s, server_id %d", flavor, s.Version, addr, user, s.ServerID)
	switch {
	case s.Flavor == gtid.MariaDB && !v.atLeast(10, 0, 2):
		return fail(name, "upgrade to MariaDB 10.0.2 or newer (10.5 or newer for binlog_row_metadata)",
			"%s: this version has no GTIDs", detail)
	case s.Flavor == gtid.MySQL && !v.atLeast(5, 6, 5):
		return fail(name, "upgrade to MySQL 5.7 or newer (8.0 or newer for binlog_row_metadata)",
			"%s: this version has no GTIDs", detail)
	case s.ServerID == 0:
		return fail(name, "set server_id to a unique non-zero value "+myCnf+"; a server with server_id 0 refuses replicas",
			"%s: server_id is 0", detail)
	case routerID != 0 && routerID == s.ServerID:
		return fail(name, "set --server-id to a value no server or replica in the topology uses (default 1001)",
			"%s: --server-id %d is the server's own server_id, and the server refuses a replica with its own id", detail, routerID)
	}
	return ok(name, "%s", detail)
}

func checkLogBin(s *binlog.Server) Check {
	if s.LogBin {
		return ok("log_bin", "ON (the server writes a binary log)")
	}
	return because(CauseConfig, fail("log_bin", "start the server with log_bin (e.g. log_bin=mysql-bin in [mysqld] of my.cnf) and restart it; MySQL 8 has it on unless --skip-log-bin or --disable-log-bin is given",
		"OFF: the server writes no binary log, so there is nothing to read"))
}

func checkFormat(s *binlog.Server) Check {
	if strings.EqualFold(s.Format, "ROW") {
		return ok("binlog_format", "ROW")
	}
	return because(CauseConfig, fail("binlog_format", "SET GLOBAL binlog_format = 'ROW' "+myCnf+"; sessions opened before keep their format until they reconnect",
		"%s: outbox INSERTs are logged as SQL text, not as rows the router can read (binlog_format=ROW is needed)", s.Format))
}

func checkRowImage(s *binlog.Server) Check {
	if strings.EqualFold(s.RowImage, "FULL") {
		return ok("binlog_row_image", "FULL")
	}
	return because(CauseConfig, fail("binlog_row_image", "SET GLOBAL binlog_row_image = 'FULL' "+myCnf,
		"%s: row events may leave out columns, so outbox rows cannot be mapped (binlog_row_image=FULL is needed)", s.RowImage))
}

func checkRowMetadata(s *binlog.Server, v version) Check {
	const name = "binlog_row_metadata"
	const why = "TABLE_MAP events carry no column names, so the router takes them from information_schema, which describes the table as it is now: after a DDL on an outbox table, rows logged before it and read later (catch-up) can have their values mapped to the wrong columns"
	switch {
	case s.FullMetadata():
		return ok(name, "FULL (column names are in the binlog)")
	case s.RowMetadata == "":
		upgrade := "upgrade to MySQL 8.0.1 or newer"
		if s.Flavor == gtid.MariaDB {
			upgrade = "upgrade to MariaDB 10.5 or newer"
		}
		return warn(name, upgrade+" and set binlog_row_metadata=FULL; until then, stop the router before DDL on an outbox table and let it catch up first",
			"not supported by %s: %s", s.Version, why)
	}
	return warn(name, "SET GLOBAL binlog_row_metadata = 'FULL' "+myCnf,
		"%s: %s", s.RowMetadata, why)
}

func checkGTID(s *binlog.Server, vars map[string]string) Check {
	const name = "gtid"
	if s.Flavor == gtid.MariaDB {
		pos := bracket(s.Executed)
		strict, known := vars[varStrictMode]
		if known && !on(strict) {
			return warn(name, "SET GLOBAL gtid_strict_mode = ON "+myCnf,
				"MariaDB GTIDs are always on (gtid_binlog_pos %s), but gtid_strict_mode is OFF: a GTID logged out of order within a domain would make the router's position ambiguous", pos)
		}
		return ok(name, "MariaDB GTIDs are always on, gtid_strict_mode ON, gtid_binlog_pos %s", pos)
	}
	enforce := vars[varEnforceGTID]
	if !strings.EqualFold(s.GTIDMode, "ON") || !strings.EqualFold(enforce, "ON") {
		return because(CauseConfig, fail(name, "set enforce_gtid_consistency=ON, then gtid_mode step by step OFF_PERMISSIVE, ON_PERMISSIVE, ON (SET GLOBAL, as the MySQL manual's \"Enabling GTID Transactions Online\" describes), "+myCnf,
			"gtid_mode=%s, enforce_gtid_consistency=%s: the router resumes by GTID and needs both ON", s.GTIDMode, orUnknown(enforce)))
	}
	return ok(name, "gtid_mode=ON, enforce_gtid_consistency=ON, gtid_executed %s", bracket(s.Executed))
}

// bracket prints a GTID set as the server prints a Gtid_list, "[0-1-5]",
// so that an empty one shows as "[]"; a long one is shortened.
func bracket(s *gtid.Set) string {
	text := s.String()
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return "[" + text + "]"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

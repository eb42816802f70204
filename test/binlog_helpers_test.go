package test

import (
	"database/sql"
	"testing"
	"time"
)

// gtidPos is a server's @@gtid_binlog_pos (the GTID of its last
// transaction per domain).
func gtidPos(t testing.TB, db *sql.DB) string {
	t.Helper()
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatalf("reading @@gtid_binlog_pos: %v", err)
	}
	return pos
}

// gtidPos is the env's server's @@gtid_binlog_pos.
func (e *env) gtidPos() string {
	e.t.Helper()
	return gtidPos(e.t, e.db)
}

// newestBinlog is the name of the binlog file the server writes to now.
func (e *env) newestBinlog() string {
	e.t.Helper()
	var file string
	if err := e.db.QueryRow("SHOW MASTER STATUS").Scan(&file, new(any), new(any), new(any)); err != nil {
		e.t.Fatalf("SHOW MASTER STATUS: %v", err)
	}
	return file
}

// binlogFiles is the number of binlog files the server keeps.
func (e *env) binlogFiles() int {
	e.t.Helper()
	rows, err := e.db.Query("SHOW BINARY LOGS")
	if err != nil {
		e.t.Fatalf("SHOW BINARY LOGS: %v", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("SHOW BINARY LOGS: %v", err)
	}
	return n
}

// purgeBinlogsTo purges the binlog files before file, retrying until the
// server has let them go: MariaDB keeps a binlog until InnoDB has made its
// transactions durable (the binlog checkpoint), so PURGE may leave it at
// first.
func (e *env) purgeBinlogsTo(file string) {
	e.t.Helper()
	eventually(e.t, 30*time.Second, "purging the binlogs before "+file, func() bool {
		e.exec("PURGE BINARY LOGS TO '" + file + "'")
		return e.binlogFiles() == 1
	})
}

// waitBinlogDumpsGone waits until no dump thread reads the server's
// binlog: a stopped router's connection is noticed a moment later, and
// the server keeps a binlog that a dump thread still reads.
func (e *env) waitBinlogDumpsGone() {
	e.t.Helper()
	eventually(e.t, 30*time.Second, "the stopped router's dump thread to end", func() bool {
		var n int
		return e.db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'").Scan(&n) == nil && n == 0
	})
}

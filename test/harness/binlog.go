package harness

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"
)

// GTIDPos is a server's @@gtid_binlog_pos (the GTID of its last
// transaction per domain).
func GTIDPos(t testing.TB, db *sql.DB) string {
	t.Helper()
	var pos string
	if err := db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		t.Fatalf("reading @@gtid_binlog_pos: %v", err)
	}
	return pos
}

// GTIDPos is the env's server's @@gtid_binlog_pos.
func (e *Env) GTIDPos() string {
	e.T.Helper()
	return GTIDPos(e.T, e.DB)
}

// NewestBinlog is the name of the binlog file the server writes to now.
func (e *Env) NewestBinlog() string {
	e.T.Helper()
	var file string
	if err := e.DB.QueryRow("SHOW MASTER STATUS").Scan(&file, new(any), new(any), new(any)); err != nil {
		e.T.Fatalf("SHOW MASTER STATUS: %v", err)
	}
	return file
}

// binlogFiles is the number of binlog files the server keeps.
func (e *Env) binlogFiles() int {
	e.T.Helper()
	rows, err := e.DB.Query("SHOW BINARY LOGS")
	if err != nil {
		e.T.Fatalf("SHOW BINARY LOGS: %v", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		e.T.Fatalf("SHOW BINARY LOGS: %v", err)
	}
	return n
}

// PurgeBinlogsTo purges the binlog files before file, retrying until the
// server has let them go: MariaDB keeps a binlog until InnoDB has made its
// transactions durable (the binlog checkpoint), so PURGE may leave it at
// first.
func (e *Env) PurgeBinlogsTo(file string) {
	e.T.Helper()
	Eventually(e.T, 30*time.Second, "purging the binlogs before "+file, func() bool {
		e.Exec("PURGE BINARY LOGS TO '" + file + "'")
		return e.binlogFiles() == 1
	})
}

// WaitBinlogDumpsGone waits until no dump thread reads the server's
// binlog: a stopped router's connection is noticed a moment later, and
// the server keeps a binlog that a dump thread still reads.
func (e *Env) WaitBinlogDumpsGone() {
	e.T.Helper()
	Eventually(e.T, 30*time.Second, "the stopped router's dump thread to end", func() bool {
		var n int
		return e.DB.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'").Scan(&n) == nil && n == 0
	})
}

// GTIDSeqs parses a MariaDB GTID position ("0-1-42,1-1-7") into the last
// sequence number per domain.
func GTIDSeqs(t testing.TB, s string) map[uint32]uint64 {
	t.Helper()
	out := map[uint32]uint64{}
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		d, n, ok := ParseGTID(g)
		if !ok {
			t.Fatalf("GTID %q in %q", g, s)
		}
		out[d] = max(out[d], n)
	}
	return out
}

// ParseGTID splits one GTID "domain-server-seq"; ok is false when g is not one.
func ParseGTID(g string) (domain uint32, seq uint64, ok bool) {
	parts := strings.Split(g, "-")
	if len(parts) != 3 {
		return 0, 0, false
	}
	d, err1 := strconv.ParseUint(parts[0], 10, 32)
	n, err2 := strconv.ParseUint(parts[2], 10, 64)
	return uint32(d), n, err1 == nil && err2 == nil
}

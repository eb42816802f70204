package binlog

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

var (
	// ErrBinlogPurged means the server no longer has the binlog the start
	// position needs: the events after it were purged. Nothing can be
	// resumed; see PurgedError for the missing GTIDs and the way out.
	ErrBinlogPurged = errors.New("binlog purged")

	// ErrAccessDenied means the server refused the credentials or the
	// replication privileges. Retrying cannot help.
	ErrAccessDenied = errors.New("access denied")

	// ErrUnmappable means an outbox row could not be mapped to the outbox
	// columns (a required column is missing or the row has a different
	// column count than the known layout). The router stops rather than
	// skip the row.
	ErrUnmappable = errors.New("outbox row cannot be mapped")

	// ErrOutboxUpdate means an UPDATE of an outbox row was seen and the
	// policy is to fail: outbox rows are immutable.
	ErrOutboxUpdate = errors.New("update of an outbox row")

	// ErrServerConfig means the server is not set up for row-based
	// replication with GTIDs (binlog off, format not ROW, image not FULL,
	// GTID mode off). Server.Check finds it at start; the stream finds it
	// per event when a setting changed at runtime: a row image without a
	// mapped column, an outbox INSERT logged as a statement, or TABLE_MAP
	// events without column names after the router started with
	// binlog_row_metadata=FULL (each an *EventError that also wraps
	// ErrUnmappable or ErrStatementFormat). A server that ignores the
	// GTID position it is asked for (*PositionIgnoredError) wraps it too.
	ErrServerConfig = errors.New("server not configured for row-based binlog with GTIDs")
)

// settingError marks err as caused by a server setting the router needs:
// errors.Is(e, ErrServerConfig) holds, and the text is err's.
type settingError struct{ error }

func (e settingError) Unwrap() []error { return []error{e.error, ErrServerConfig} }

// PurgedError reports a start position the server cannot serve.
type PurgedError struct {
	Start   string // the requested position (GTID set)
	Missing string // GTIDs the server no longer has, when known
	Server  string // the server's message
}

func (e *PurgedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "binlog purged: the server no longer has the events after GTID set %q", e.Start)
	if e.Missing != "" {
		fmt.Fprintf(&b, " (missing %s)", e.Missing)
	}
	if e.Server != "" {
		fmt.Fprintf(&b, ": %s", e.Server)
	}
	b.WriteString("; events in that range were never published. Publish them from the outbox table with `binlog-router recover --since <a time before the router stopped>` (add --dry-run first to see the counts), which skips every event already in Kafka and moves the checkpoint to its snapshot, then run again; or move the checkpoint to the server's oldest position (`binlog-router validate` prints it) with `binlog-router checkpoint set --gtid <set>`, or reset it and start with --start earliest, both leaving the gap unpublished")
	return b.String()
}

// Unwrap makes errors.Is(err, ErrBinlogPurged) true.
func (e *PurgedError) Unwrap() error { return ErrBinlogPurged }

// EventError names the binlog event of an outbox table at which the
// reader stops, before handing over anything after it: a row it cannot
// decode or map (ErrUnmappable), an UPDATE under UpdateFail
// (ErrOutboxUpdate), an INSERT logged as a statement (ErrStatementFormat).
// It names the table and transaction; the event id, when a row has one,
// is in Err. (route.RowError is a decoded row that cannot become a
// record.)
type EventError struct {
	Table string // db.table
	GTID  string // the transaction's GTID; "" for an anonymous one
	Err   error  // what is wrong; errors.Is matches the sentinel
	Fix   string // what the operator can do, when known
}

func (e *EventError) Error() string {
	txn := "transaction " + e.GTID
	if e.GTID == "" {
		txn = "anonymous transaction"
	}
	s := fmt.Sprintf("outbox table %s, %s: %v", e.Table, txn, e.Err)
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

func (e *EventError) Unwrap() error { return e.Err }

// mysqlCode returns the server error code in err, if any.
func mysqlCode(err error) (uint16, string, bool) {
	var me *gomysql.MyError
	if errors.As(err, &me) {
		return me.Code, me.Message, true
	}
	return 0, "", false
}

// classify turns a replication error into a fatal error, or returns nil
// when the error is transient (network, server restart) and a reconnect
// with backoff may succeed.
func classify(err error, start string) error {
	code, msg, ok := mysqlCode(err)
	if !ok {
		return nil
	}
	switch code {
	case gomysql.ER_MASTER_FATAL_ERROR_READING_BINLOG:
		lower := strings.ToLower(msg)
		if strings.Contains(lower, "purged") || strings.Contains(lower, "could not find gtid state") ||
			strings.Contains(lower, "could not find first log") {
			return &PurgedError{Start: start, Server: msg}
		}
		return fmt.Errorf("server refused to send the binlog from %q: %s", start, msg)
	case gomysql.ER_ACCESS_DENIED_ERROR, gomysql.ER_DBACCESS_DENIED_ERROR, gomysql.ER_SPECIFIC_ACCESS_DENIED_ERROR:
		return fmt.Errorf("%w: %s; grant the router's user REPLICATION SLAVE and REPLICATION CLIENT (MariaDB: BINLOG MONITOR) and SELECT on the outbox tables", ErrAccessDenied, msg)
	}
	return nil
}

// ConnectionLost reports whether err looks like a lost or refused
// connection (end of stream, a network error): waiting and connecting
// again may cure it. The Reader retries these itself while it streams;
// one that ends a start (reading information_schema, scanning for DDL)
// is worth a new Run.
func ConnectionLost(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}

package binlog

import (
	"errors"
	"fmt"
	"github.com/binlog-router/binlog-router/internal/schema"
	"strings"
)

// ErrStatementFormat means an outbox table was written by a statement
// logged as SQL text (binlog_format STATEMENT or MIXED): the binlog has no
// row image to publish.
var ErrStatementFormat = errors.New("outbox table written in statement format")

// statement follows a query event that names an outbox table: a DDL
// statement changes the tracked definitions; a write logged as a
// statement stops the router, whose rows would otherwise be lost.
func (s *stream) statement(query, defaultDB, gtidText string) error {
	c := s.tables
	if c.defs == nil {
		c.invalidate()
		return nil
	}
	res, err := c.defs.apply(query, defaultDB)
	table := ""
	if len(res.touched) > 0 {
		table = res.touched[0]
	}
	if err != nil {
		return &EventError{Table: table, GTID: gtidText,
			Err: fmt.Errorf("%w; statement: %s", err, clip(query, 300)), Fix: fullMetadataFix}
	}
	if res.statement != "" {
		return &EventError{Table: res.written, GTID: gtidText,
			Err: settingError{fmt.Errorf("%w: an %s was logged as a statement, without row images (binlog_format is not ROW on the server); statement: %s", ErrStatementFormat, res.statement, clip(query, 300))},
			Fix: "set binlog_format=ROW on the server (SET GLOBAL and in its configuration; sessions opened before keep their format until they reconnect), then publish the rows of this transaction with `binlog-router replay` or from the table"}
	}
	for _, name := range res.touched {
		clear(c.byID)
		if after, ok := c.settleAfter[name]; ok && after == gtidText {
			// The last DDL before information_schema was read: from
			// here on its answer is the definition in force.
			if known, ok := c.defs.known(name); ok && !sameNames(known.Columns, c.settle[name].Columns) {
				return &EventError{Table: name, GTID: gtidText,
					Err: fmt.Errorf("%w: after this statement the tracked columns (%s) differ from information_schema's (%s); statement: %s", ErrUnmappable, describeDefs(known.Columns), describeDefs(c.settle[name].Columns), clip(query, 300)),
					Fix: fullMetadataFix}
			}
			c.defs.set(name, c.settle[name])
			delete(c.settleAfter, name)
			delete(c.settle, name)
		}
	}
	return nil
}

// sameNames compares column names only: a type parsed from DDL may be
// spelled otherwise than information_schema spells it (JSON, LONGTEXT).
func sameNames(a, b []schema.ColumnDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i].Name, b[i].Name) {
			return false
		}
	}
	return true
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

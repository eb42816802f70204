package schema

import (
	"errors"
	"fmt"
	"strings"
)

// Layout is Columns resolved against one table's actual column list: the
// 0-based ordinal of each column in a row image, -1 when an optional column
// is absent. Required ordinals are always >= 0 and < NumColumns.
//
// A Layout is valid only for the table definition it was resolved from;
// resolve again after any DDL on the table.
type Layout struct {
	EventID, AggregateType, AggregateID, EventType, Payload int // required
	CreatedAt, SchemaVersion, Traceparent, Headers          int // optional: -1 when absent

	NumColumns int // how many columns the table has
}

// errNoColumnNames is returned by Resolve for an empty column list, which
// means the caller had no metadata rather than that every column is missing.
var errNoColumnNames = errors.New("no column names were given; the table's column list must come from binlog TABLE_MAP metadata (binlog_row_metadata=FULL) or information_schema")

// Resolve maps names, the table's columns in ordinal order (from binlog
// TABLE_MAP metadata or TableColumns), to a Layout. Names match
// case-insensitively. A missing required column is a *MissingColumnError
// naming table, column and fix; an absent optional column, or one whose name
// is empty in c, gets ordinal -1. table is used only in error text.
func (c Columns) Resolve(table string, names []string) (Layout, error) {
	if err := c.Validate(); err != nil {
		return Layout{}, fmt.Errorf("resolving outbox columns of %s: %w", table, err)
	}
	if len(names) == 0 {
		return Layout{}, fmt.Errorf("resolving outbox columns of %s: %w", table, errNoColumnNames)
	}
	l := Layout{NumColumns: len(names)}
	for _, f := range fields {
		name := *f.name(&c)
		ord := -1
		if name != "" {
			ord = indexFold(names, name)
		}
		if ord < 0 && f.required {
			return Layout{}, &MissingColumnError{Table: table, Column: name, Field: f.label, Flag: f.flag}
		}
		*f.ordinal(&l) = ord
	}
	return l, nil
}

// indexFold returns the ordinal of the first of names equal to name under
// case folding, or -1.
func indexFold(names []string, name string) int {
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i
		}
	}
	return -1
}

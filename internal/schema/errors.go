package schema

import (
	"errors"
	"fmt"
)

// ErrTableNotFound means the server has no table of the given name (or the
// user cannot see it). TableColumns wraps it with the table name.
var ErrTableNotFound = errors.New("table not found")

// MissingColumnError is returned by Columns.Resolve when a table lacks a
// required outbox column.
type MissingColumnError struct {
	Table  string // the table as named to Resolve, usually "db.table"
	Column string // the column name that was looked for
	Field  string // the outbox field it holds, e.g. "aggregate id"
	Flag   string // the flag that names the column, e.g. "--column-aggregate-id"
}

func (e *MissingColumnError) Error() string {
	return fmt.Sprintf("outbox table %s has no column %q for the %s; add the column or set %s to the column that holds it",
		e.Table, e.Column, e.Field, e.Flag)
}

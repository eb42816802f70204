package validate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// ErrMissingTable means a configured outbox table does not exist on the
// server (or the user cannot see it). A router running with it would
// move its checkpoint over the rows of the table the operator meant.
var ErrMissingTable = errors.New("outbox table not found")

// MissingTableError is a configured outbox table the server does not
// show, with the tables whose names are close to it.
type MissingTableError struct {
	Table      schema.TableName
	NearMisses []schema.TableName // visible tables whose name is close (schema.TableName.NearMiss)
	Denied     bool               // SELECT on it was denied: it may exist, out of the user's sight
	Flavor     gtid.Flavor        // for the CREATE TABLE hint
	User       string             // CURRENT_USER(), for the GRANT hint; may be empty
}

func (e *MissingTableError) Unwrap() error { return ErrMissingTable }

func (e *MissingTableError) Error() string {
	return fmt.Sprintf("outbox table %s %s: %s", e.Table, e.detail(), e.fix())
}

// detail says what was found, fix what to do (the two halves of a check).
func (e *MissingTableError) detail() string {
	what := "does not exist on the server"
	if e.Denied {
		what = fmt.Sprintf("is not visible to %s, which has no privilege on it (or it does not exist)", orUnknown(e.User))
	}
	if len(e.NearMisses) > 0 {
		what += ", but " + joinNames(e.NearMisses) + " does"
	}
	return what
}

func (e *MissingTableError) fix() string {
	if len(e.NearMisses) > 0 {
		return "correct --outbox-table (names are case sensitive); --allow-missing-table does not cover a name this close to an existing table"
	}
	if e.Denied {
		return fmt.Sprintf("GRANT SELECT ON %s TO %s;", e.Table.QuotedString(), quoteAccount(orUnknown(e.User)))
	}
	return fmt.Sprintf("create it (`binlog-router schema --flavor %s --table %s` prints the CREATE TABLE) or correct --outbox-table; to start the router before the table is created, pass --allow-missing-table",
		orUnknown(string(e.Flavor)), e.Table)
}

// allowed reports whether --allow-missing-table lets the router start
// without the table: only when no visible table has a name close to it.
func (e *MissingTableError) allowed(allowMissing bool) bool {
	return allowMissing && len(e.NearMisses) == 0
}

func joinNames(names []schema.TableName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = n.String()
	}
	return strings.Join(s, ", ")
}

// TableReport is what the server says about the configured outbox
// tables' existence; validate and run judge it the same way (Err).
type TableReport struct {
	Missing []*MissingTableError
}

// Err returns the refusal of `run`: every missing table, unless
// allowMissing and no visible table has a name close to it. Each joined
// error wraps ErrMissingTable.
func (r TableReport) Err(allowMissing bool) error {
	var errs []error
	for _, m := range r.Missing {
		if !m.allowed(allowMissing) {
			errs = append(errs, m)
		}
	}
	return errors.Join(errs...)
}

// RequireTables is the table check of `run`: it looks up each outbox
// table (CheckTables) and returns the refusal (TableReport.Err); when
// tables are missing but allowed, it arms guard with them (give the
// guard to the reader before it streams) and returns the report to log.
func RequireTables(ctx context.Context, db *sql.DB, flavor gtid.Flavor, tables []schema.TableName, allowMissing bool, guard *Guard) (TableReport, error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	var user string
	if err := db.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user); err != nil {
		return TableReport{}, fmt.Errorf("looking up the outbox tables: %w", err)
	}
	r, err := CheckTables(ctx, db, tables, flavor, user)
	if err != nil {
		return r, err
	}
	if err := r.Err(allowMissing); err != nil {
		return r, err
	}
	guard.Arm(r)
	return r, nil
}

// CheckTables looks up each configured outbox table on the server and
// reports the missing ones, with the visible tables whose names are close.
func CheckTables(ctx context.Context, db *sql.DB, tables []schema.TableName, flavor gtid.Flavor, user string) (TableReport, error) {
	var r TableReport
	var all []schema.TableName
	for _, t := range tables {
		info, err := readTable(ctx, db, t)
		if err != nil {
			return r, fmt.Errorf("looking up outbox table %s: %w", t, err)
		}
		if info.visible {
			continue
		}
		if all == nil {
			if all, err = visibleTables(ctx, db); err != nil {
				return r, err
			}
		}
		r.Missing = append(r.Missing, missingTable(info, all, flavor, user))
	}
	return r, nil
}

// missingTable describes a table that information_schema does not show.
func missingTable(info tableInfo, all []schema.TableName, flavor gtid.Flavor, user string) *MissingTableError {
	e := &MissingTableError{Table: info.name, Denied: info.probe == selectDenied, Flavor: flavor, User: user}
	for _, o := range all {
		if info.name.NearMiss(o) {
			e.NearMisses = append(e.NearMisses, o)
		}
	}
	return e
}

// visibleTables lists the base tables the user can see outside the
// server's own schemas.
func visibleTables(ctx context.Context, db *sql.DB) ([]schema.TableName, error) {
	rows, err := db.QueryContext(ctx, `SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES
WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') ORDER BY TABLE_SCHEMA, TABLE_NAME`)
	if err != nil {
		return nil, fmt.Errorf("listing tables in information_schema.TABLES: %w", err)
	}
	defer rows.Close()
	var out []schema.TableName
	for rows.Next() {
		var t schema.TableName
		if err := rows.Scan(&t.Database, &t.Table); err != nil {
			return nil, fmt.Errorf("listing tables in information_schema.TABLES: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

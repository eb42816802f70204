package validate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Server error numbers of a probe SELECT.
const (
	errDBAccessDenied    = 1044 // ER_DBACCESS_DENIED_ERROR
	errBadDB             = 1049 // ER_BAD_DB_ERROR
	errTableAccessDenied = 1142 // ER_TABLEACCESS_DENIED_ERROR
	errNoSuchTable       = 1146 // ER_NO_SUCH_TABLE
)

// column is one column of an outbox table, from information_schema.
type column struct {
	name     string
	dataType string // DATA_TYPE, lower case: varchar, longtext, json, ...
	fullType string // COLUMN_TYPE: varchar(255), timestamp(6), ...
	charset  string // CHARACTER_SET_NAME of a string column; "" for others
}

// tableInfo is what the server says about one outbox table.
type tableInfo struct {
	name    schema.TableName
	visible bool   // information_schema lists it (it exists and the user has some privilege on it)
	kind    string // TABLE_TYPE: BASE TABLE, VIEW, ...
	engine  string
	columns []column
	probe   selectAccess // SELECT 1 FROM it LIMIT 0
	missing bool         // the probe said the table or its database does not exist
}

// readTable reads t's definition and probes SELECT on it.
func readTable(ctx context.Context, db *sql.DB, t schema.TableName) (tableInfo, error) {
	info := tableInfo{name: t}
	var engine sql.NullString
	err := db.QueryRowContext(ctx, `SELECT TABLE_TYPE, ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`,
		t.Database, t.Table).Scan(&info.kind, &engine)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return info, fmt.Errorf("reading information_schema.TABLES: %w", err)
	default:
		info.visible, info.engine = true, engine.String
	}
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, CHARACTER_SET_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, t.Database, t.Table)
	if err != nil {
		return info, fmt.Errorf("reading information_schema.COLUMNS: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c column
		var charset sql.NullString
		if err := rows.Scan(&c.name, &c.dataType, &c.fullType, &charset); err != nil {
			return info, fmt.Errorf("reading information_schema.COLUMNS: %w", err)
		}
		c.dataType = strings.ToLower(c.dataType)
		c.charset = schema.ColumnCharset(c.dataType, charset.String, "")
		info.columns = append(info.columns, c)
	}
	if err := rows.Err(); err != nil {
		return info, fmt.Errorf("reading information_schema.COLUMNS: %w", err)
	}
	var one int
	err = db.QueryRowContext(ctx, "SELECT 1 FROM "+t.QuotedString()+" LIMIT 0").Scan(&one)
	var me *mysql.MySQLError
	switch {
	case err == nil, errors.Is(err, sql.ErrNoRows):
		info.probe = selectAllowed
	case errors.As(err, &me) && (me.Number == errTableAccessDenied || me.Number == errDBAccessDenied):
		info.probe = selectDenied
	case errors.As(err, &me) && (me.Number == errNoSuchTable || me.Number == errBadDB):
		info.missing = true
	case ctx.Err() != nil:
		return info, fmt.Errorf("probing SELECT on %s: %w", t, err)
	}
	return info, nil
}

// checkTable judges one visible outbox table: that it is a base table whose
// columns resolve, then (in a second check) that their types are ones the
// router publishes with the flags given (rules).
func checkTable(info tableInfo, cols schema.Columns, flavor gtid.Flavor, user string, rules valueRules) []Check {
	name := "outbox table " + info.name.String()
	ddl := fmt.Sprintf("`binlog-router schema --flavor %s --table %s` prints the CREATE TABLE", flavor, info.name)
	// A table the server does not show is judged by missingCheck.
	if !strings.EqualFold(info.kind, "BASE TABLE") {
		return []Check{fail(name, "point --outbox-table at the base table the application inserts into",
			"is a %s: the binlog has rows of base tables only", info.kind)}
	}
	names := make([]string, len(info.columns))
	for i, c := range info.columns {
		names[i] = c.name
	}
	layout, missing, err := resolveAll(cols, info.name.String(), names)
	if err != nil {
		return []Check{fail(name, "correct the --column-* flags", "%v", err)}
	}
	if len(missing) > 0 {
		var what, flags []string
		for _, m := range missing {
			what = append(what, fmt.Sprintf("no column %q for the %s", m.Column, m.Field))
			flags = append(flags, m.Flag)
		}
		return []Check{fail(name,
			fmt.Sprintf("add the missing column(s) (%s), or name the column(s) that hold them with %s", ddl, strings.Join(flags, ", ")),
			"%s (it has: %s)", strings.Join(what, "; "), strings.Join(names, ", "))}
	}
	found := fmt.Sprintf("%s, %d columns, every required outbox column found", orUnknown(info.engine), len(info.columns))
	var absent []string
	for _, o := range []struct {
		ord  int
		name string
	}{{layout.CreatedAt, cols.CreatedAt}, {layout.SchemaVersion, cols.SchemaVersion},
		{layout.Traceparent, cols.Traceparent}, {layout.Headers, cols.Headers}} {
		if o.ord < 0 && o.name != "" {
			absent = append(absent, o.name)
		}
	}
	if len(absent) > 0 {
		found += fmt.Sprintf("; optional %s absent (used once added)", strings.Join(absent, ", "))
	}
	table := ok(name, "%s", found)
	if !strings.EqualFold(info.engine, "InnoDB") {
		table = warn(name, fmt.Sprintf("ALTER TABLE %s ENGINE=InnoDB;", info.name.QuotedString()),
			"%s; but ENGINE=%s is not transactional: an outbox row survives even when the transaction that wrote it fails", found, orUnknown(info.engine))
	}
	return []Check{table, checkTypes(info, layout, rules)}
}

// resolveAll resolves names like schema.Columns.Resolve, but collects
// every missing required column instead of stopping at the first: each
// one found is added to the names and the rest resolved again, so the
// labels and flags stay schema's own.
func resolveAll(cols schema.Columns, table string, names []string) (schema.Layout, []*schema.MissingColumnError, error) {
	names = slices.Clone(names)
	var missing []*schema.MissingColumnError
	for {
		layout, err := cols.Resolve(table, names)
		var me *schema.MissingColumnError
		if !errors.As(err, &me) {
			return layout, missing, err
		}
		missing = append(missing, me)
		names = append(names, me.Column)
	}
}

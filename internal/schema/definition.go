package schema

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// ColumnDef is one column of a table definition, as far as the router
// checks it against a binlog TABLE_MAP: its name and its data type in
// information_schema's DATA_TYPE spelling ("varchar", "bigint",
// "longtext").
type ColumnDef struct {
	Name     string `json:"name"`
	DataType string `json:"type"`
}

// Names returns the column names of defs in order.
func Names(defs []ColumnDef) []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	return names
}

const definitionQuery = `SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION`

// TableDefinition reads the columns of database.table in ordinal order
// from information_schema.COLUMNS, as TableColumns does, with their data
// types. The answer is the definition now; see TableColumns.
func TableDefinition(ctx context.Context, db *sql.DB, database, table string) ([]ColumnDef, error) {
	name := TableName{Database: database, Table: table}
	rows, err := db.QueryContext(ctx, definitionQuery, database, table)
	if err != nil {
		return nil, fmt.Errorf("reading columns of %s: %w", name, err)
	}
	defer rows.Close()
	var defs []ColumnDef
	for rows.Next() {
		var d ColumnDef
		if err := rows.Scan(&d.Name, &d.DataType); err != nil {
			return nil, fmt.Errorf("reading columns of %s: %w", name, err)
		}
		d.DataType = strings.ToLower(d.DataType)
		defs = append(defs, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading columns of %s: %w", name, err)
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("reading columns of %s: %w; create it (binlog-router schema prints the DDL), grant the router's user SELECT on it, or fix --outbox-table", name, ErrTableNotFound)
	}
	return defs, nil
}

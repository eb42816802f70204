package schema

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ColumnDef is one column of a table definition, as far as the router
// needs it to decode the column's values from a binlog row image: its
// name, its data type in information_schema's DATA_TYPE spelling
// ("varchar", "bigint", "longtext"), and what converting its values
// takes.
type ColumnDef struct {
	Name     string `json:"name"`
	DataType string `json:"type"`
	// Charset is the character set of a string column as
	// information_schema spells it ("utf8mb4", "utf8mb3", "latin1";
	// "binary" for BINARY, VARBINARY and the BLOB types). It is "" for a
	// column of another type, and for a string column whose character set
	// is not known: a definition stored by a version that did not record
	// character sets, or a column defined without one while the table's
	// default was not known.
	Charset string `json:"charset,omitempty"`
	// Sign is Signed or Unsigned for an integer or decimal column; "" for
	// other types, and when not known (a definition stored by a version
	// that did not record it).
	Sign string `json:"sign,omitempty"`
}

// The values of ColumnDef.Sign.
const (
	Signed   = "signed"
	Unsigned = "unsigned"
)

// TableDef is a table's definition: its columns in ordinal order and its
// default character set, which a column added or redefined without one
// takes.
type TableDef struct {
	Columns []ColumnDef `json:"columns"`
	// Charset is the table's default character set; "" when not known.
	Charset string `json:"charset,omitempty"`
}

// UnmarshalJSON reads a definition as this version writes it (an object)
// and as earlier versions wrote it: the array of columns with names and
// data types only, whose character sets and signs are then not known.
func (d *TableDef) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' {
		*d = TableDef{}
		return json.Unmarshal(t, &d.Columns)
	}
	type plain TableDef // without this method
	return json.Unmarshal(b, (*plain)(d))
}

// Names returns the column names of defs in order.
func Names(defs []ColumnDef) []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	return names
}

// String types by DATA_TYPE: their values have a character set.
var stringTypes = map[string]bool{
	"char": true, "varchar": true, "tinytext": true, "text": true, "mediumtext": true, "longtext": true,
	"enum": true, "set": true, "json": true,
	"binary": true, "varbinary": true, "tinyblob": true, "blob": true, "mediumblob": true, "longblob": true,
}

// binaryTypes are the string types whose character set is always binary.
var binaryTypes = map[string]bool{
	"binary": true, "varbinary": true, "tinyblob": true, "blob": true, "mediumblob": true, "longblob": true,
}

// numericTypes are the types declared SIGNED or UNSIGNED.
var numericTypes = map[string]bool{
	"tinyint": true, "smallint": true, "mediumint": true, "int": true, "integer": true, "bigint": true,
	"decimal": true, "numeric": true, "float": true, "double": true, "real": true,
}

// IsStringType reports whether values of DATA_TYPE dataType have a
// character set (the binary types included).
func IsStringType(dataType string) bool { return stringTypes[dataType] }

// IsNumericType reports whether DATA_TYPE dataType is declared SIGNED or
// UNSIGNED.
func IsNumericType(dataType string) bool { return numericTypes[dataType] }

// ColumnCharset is the character set of a column of data type dataType
// declared with charset (may be ""), in a table whose default character
// set is tableCharset (may be "" when not known): the binary types are
// binary whatever is declared, JSON is utf8mb4 (MariaDB's JSON is LONGTEXT
// in utf8mb4; MySQL's binary JSON holds utf8mb4 text), other string
// types have the declared or else the table's character set; non-string
// types have none (""). The result is "" also when it is not known.
func ColumnCharset(dataType, charset, tableCharset string) string {
	switch {
	case !IsStringType(dataType):
		return ""
	case binaryTypes[dataType]:
		return "binary"
	case dataType == "json":
		return "utf8mb4"
	case charset != "":
		return CanonicalCharset(charset)
	}
	return CanonicalCharset(tableCharset)
}

// CanonicalCharset spells a character set name as information_schema
// does on current servers: lower case, utf8 as utf8mb3 (its name since
// MariaDB 10.6 and MySQL 8.0.30).
func CanonicalCharset(name string) string {
	name = strings.ToLower(name)
	if name == "utf8" {
		return "utf8mb3"
	}
	return name
}

// CollationCharset is the character set of a collation, by name: every
// collation's name begins with its character set's name and an underscore
// ("latin1_swedish_ci", "utf8mb4_uca1400_ai_ci"), and "binary" is the
// binary character set's.
func CollationCharset(collation string) string {
	cs, _, _ := strings.Cut(collation, "_")
	return CanonicalCharset(cs)
}

const definitionQuery = `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, CHARACTER_SET_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION`

const tableCollationQuery = `SELECT TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`

// TableDefinition reads the definition of database.table from
// information_schema: its columns in ordinal order, as TableColumns does,
// with their data types, character sets and signs, and the table's
// default character set. The answer is the definition now; see
// TableColumns.
func TableDefinition(ctx context.Context, db *sql.DB, database, table string) (TableDef, error) {
	name := TableName{Database: database, Table: table}
	fail := func(err error) (TableDef, error) {
		return TableDef{}, fmt.Errorf("reading columns of %s: %w", name, err)
	}
	var def TableDef
	var collation sql.NullString
	switch err := db.QueryRowContext(ctx, tableCollationQuery, database, table).Scan(&collation); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fail(err)
	default:
		def.Charset = CollationCharset(collation.String)
	}
	rows, err := db.QueryContext(ctx, definitionQuery, database, table)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var d ColumnDef
		var columnType string
		var charset sql.NullString
		if err := rows.Scan(&d.Name, &d.DataType, &columnType, &charset); err != nil {
			return fail(err)
		}
		d.DataType = strings.ToLower(d.DataType)
		d.Charset = ColumnCharset(d.DataType, charset.String, def.Charset)
		if IsNumericType(d.DataType) {
			d.Sign = Signed
			if strings.Contains(strings.ToLower(columnType), "unsigned") {
				d.Sign = Unsigned
			}
		}
		def.Columns = append(def.Columns, d)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if len(def.Columns) == 0 {
		return TableDef{}, fmt.Errorf("reading columns of %s: %w; create it (binlog-router schema prints the DDL), grant the router's user SELECT on it, or fix --outbox-table", name, ErrTableNotFound)
	}
	return def, nil
}

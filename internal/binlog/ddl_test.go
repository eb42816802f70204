package binlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// defsOf builds columns from "name type [unsigned | charset], ...": string
// columns have character set utf8mb4 unless one is given (binary types
// binary), numeric ones are signed unless unsigned.
func defsOf(spec string) []schema.ColumnDef {
	var out []schema.ColumnDef
	for _, f := range strings.Split(spec, ",") {
		parts := strings.Fields(f)
		d := schema.ColumnDef{Name: parts[0], DataType: parts[1]}
		extra := ""
		if len(parts) > 2 {
			extra = parts[2]
		}
		if schema.IsNumericType(d.DataType) {
			d.Sign = schema.Signed
			if extra == "unsigned" {
				d.Sign = schema.Unsigned
			}
		}
		cs := "utf8mb4"
		if extra != "" && extra != "unsigned" {
			cs = extra
		}
		d.Charset = schema.ColumnCharset(d.DataType, cs, "")
		out = append(out, d)
	}
	return out
}

// tableOf is a utf8mb4 table of the columns of spec (see defsOf).
func tableOf(spec string) schema.TableDef {
	return schema.TableDef{Columns: defsOf(spec), Charset: "utf8mb4"}
}

func TestDefinitionsApply(t *testing.T) {
	start := "id bigint, event_id char, payload longtext"
	tests := []struct {
		name, query string
		want        string // "" : unknown afterwards
		err         bool   // an error: the known definition became uncertain
		stmt        string
	}{
		{"add at end", "ALTER TABLE outbox ADD COLUMN a INT", start + ", a int", false, ""},
		{"add first instant", "ALTER TABLE outbox ADD COLUMN a INT FIRST, ALGORITHM=INSTANT", "a int, " + start, false, ""},
		{"add after", "ALTER TABLE app.outbox ADD a VARCHAR(3) AFTER id", "id bigint, a varchar, event_id char, payload longtext", false, ""},
		{"add several", "ALTER TABLE outbox ADD (a INT, b BLOB)", start + ", a int, b blob", false, ""},
		{"drop", "ALTER TABLE outbox DROP COLUMN id", "event_id char, payload longtext", false, ""},
		{"drop partition", "ALTER TABLE outbox DROP PARTITION p2024_01, p2024_02", start, false, ""},
		{"reorganize partition", "ALTER TABLE outbox REORGANIZE PARTITION p_max INTO (PARTITION p1 VALUES LESS THAN (100), PARTITION p_max VALUES LESS THAN MAXVALUE)", start, false, ""},
		{"add partition", "ALTER TABLE outbox ADD PARTITION (PARTITION p3 VALUES LESS THAN (300))", start, false, ""},
		{"truncate partition", "ALTER TABLE outbox TRUNCATE PARTITION p1", start, false, ""},
		{"partition by", "ALTER TABLE outbox PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN MAXVALUE)", start, false, ""},
		{"remove partitioning", "ALTER TABLE outbox REMOVE PARTITIONING", start, false, ""},
		{"exchange partition", "ALTER TABLE outbox EXCHANGE PARTITION p0 WITH TABLE old_outbox", start, false, ""},
		{"drop missing", "ALTER TABLE outbox DROP COLUMN nope", "", true, ""},
		{"drop if exists", "ALTER TABLE outbox DROP COLUMN IF EXISTS nope", start, false, ""},
		{"modify reorder", "ALTER TABLE outbox MODIFY payload TEXT FIRST", "payload text, id bigint, event_id char", false, ""},
		{"change rename retype", "ALTER TABLE outbox CHANGE id seq INT UNSIGNED AFTER payload", "event_id char, payload longtext, seq int unsigned", false, ""},
		{"rename column", "ALTER TABLE outbox RENAME COLUMN id TO seq", "seq bigint, event_id char, payload longtext", false, ""},
		{"binary types", "ALTER TABLE outbox ADD a BINARY(16), ADD b VARBINARY(8), ADD c JSON", start + ", a binary, b varbinary, c json", false, ""},
		{"index and options", "ALTER TABLE outbox ADD INDEX i (id), ENGINE=InnoDB, LOCK=NONE", start, false, ""},
		{"other table", "ALTER TABLE other ADD COLUMN a INT FIRST", start, false, ""},
		{"other database", "ALTER TABLE x.outbox ADD COLUMN a INT FIRST", start, false, ""},
		{"case differs", "ALTER TABLE OUTBOX ADD COLUMN a INT FIRST", "", true, ""},
		{"convert charset", "ALTER TABLE outbox CONVERT TO CHARACTER SET latin1", "id bigint, event_id char latin1, payload longtext latin1", false, ""},
		{"convert retypes text", "ALTER TABLE outbox ADD t TINYTEXT, ADD u TEXT CHARACTER SET latin1, ADD b BLOB; ALTER TABLE outbox CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
			start + ", t tinytext, u mediumtext, b blob", false, ""},
		{"convert to utf16", "ALTER TABLE outbox CONVERT TO CHARACTER SET utf16", "id bigint, event_id char utf16, payload longtext utf16", false, ""},
		{"convert with columns", "ALTER TABLE outbox CONVERT TO CHARACTER SET latin1, ADD a INT", "", true, ""},
		{"convert to default", "ALTER TABLE outbox CONVERT TO CHARACTER SET DEFAULT", "", true, ""},
		{"modify charset", "ALTER TABLE outbox MODIFY payload TEXT CHARACTER SET latin1", "id bigint, event_id char, payload text latin1", false, ""},
		{"modify collation", "ALTER TABLE outbox MODIFY event_id CHAR(36) COLLATE cp1250_czech_cs", "id bigint, event_id char cp1250, payload longtext", false, ""},
		{"modify takes the table's default", "ALTER TABLE outbox MODIFY payload TEXT CHARACTER SET latin1; ALTER TABLE outbox MODIFY payload MEDIUMTEXT", "id bigint, event_id char, payload mediumtext", false, ""},
		{"MariaDB collation", "ALTER TABLE outbox MODIFY event_id CHAR(36) COLLATE utf8mb4_uca1400_ai_ci, ADD x VARCHAR(3) COLLATE ucs2_uca1400_as_cs", start + ", x varchar ucs2", false, ""},
		{"utf32 and utf8mb3", "ALTER TABLE outbox ADD x VARCHAR(3) CHARSET utf32, ADD y TEXT CHARACTER SET utf8, ADD z CHAR(2) CHARACTER SET utf8mb3", start + ", x varchar utf32, y text utf8mb3, z char utf8mb3", false, ""},
		{"binary attribute is a collation", "ALTER TABLE outbox ADD x CHAR(3) BINARY, ADD y TEXT BINARY, ADD z BINARY(16)", start + ", x char, y text, z binary", false, ""},
		{"table default for new columns", "ALTER TABLE outbox ADD x VARCHAR(3), DEFAULT CHARSET = cp1251; ALTER TABLE outbox ADD y TEXT", start + ", x varchar cp1251, y text cp1251", false, ""},
		{"table collation", "ALTER TABLE outbox COLLATE latin2_bin, ADD x VARCHAR(3)", start + ", x varchar latin2", false, ""},
		{"national", "ALTER TABLE outbox ADD x NATIONAL VARCHAR(3)", "", true, ""},
		{"nchar", "ALTER TABLE outbox ADD x NCHAR(3)", "", true, ""},
		{"unsigned and decimal", "ALTER TABLE outbox ADD a TINYINT UNSIGNED, ADD b DECIMAL(20,4), ADD c SERIAL", start + ", a tinyint unsigned, b decimal, c bigint unsigned", false, ""},
		{"two statements", "ALTER TABLE outbox DROP id; ALTER TABLE outbox ADD id INT FIRST", "id int, event_id char, payload longtext", false, ""},
		{"drop table", "DROP TABLE IF EXISTS outbox", "", false, ""},
		{"recreate", "CREATE TABLE outbox (x INT, y TEXT) DEFAULT CHARSET=utf8mb4", "x int, y text", false, ""},
		{"recreate in latin1", "CREATE TABLE outbox (x INT, y TEXT, z VARCHAR(3) CHARACTER SET utf8mb4) CHARSET latin1", "x int, y text latin1, z varchar", false, ""},
		{"create like", "CREATE TABLE outbox LIKE other", "", true, ""},
		{"create if not exists", "CREATE TABLE IF NOT EXISTS outbox (x INT)", start, false, ""},
		{"rename away", "RENAME TABLE outbox TO outbox_old", "", false, ""},
		{"swap in untracked", "RENAME TABLE outbox TO outbox_old, outbox_new TO outbox", "", true, ""},
		{"swap back", "RENAME TABLE outbox TO tmp, tmp TO outbox", start, false, ""},
		{"alter rename", "ALTER TABLE outbox RENAME TO gone", "", false, ""},
		{"unparsable", "ALTER TABLE outbox FROBNICATE", "", true, ""},
		{"statement insert", "INSERT INTO outbox (id) VALUES (1)", start, false, "INSERT"},
		{"statement replace", "REPLACE INTO app.outbox (id) VALUES (1)", start, false, "REPLACE"},
		{"truncate", "TRUNCATE TABLE outbox", start, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDefinitions(newOutboxSet([]schema.TableName{{Database: "app", Table: "outbox"}}))
			d.set("app.outbox", tableOf(start))
			res, err := d.apply(tt.query, "app")
			if tt.err {
				require.ErrorIs(t, err, errUncertainDDL)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.stmt, res.statement)
			got, known := d.known("app.outbox")
			if tt.want == "" {
				require.False(t, known)
				require.NotEmpty(t, d.why["app.outbox"])
				return
			}
			require.True(t, known, d.why["app.outbox"])
			require.Equal(t, defsOf(tt.want), got.Columns)
		})
	}
}

// An unknown definition stays unknown under ALTER and becomes known at
// CREATE TABLE.
func TestDefinitionsUnknown(t *testing.T) {
	d := newDefinitions(newOutboxSet([]schema.TableName{{Database: "app", Table: "outbox"}}))
	d.forget("app.outbox", "not read")
	_, err := d.apply("ALTER TABLE outbox ADD a INT", "app")
	require.NoError(t, err)
	_, known := d.known("app.outbox")
	require.False(t, known)
	_, err = d.apply("CREATE TABLE app.outbox (a INT, b VARCHAR(9))", "")
	require.NoError(t, err)
	def, known := d.known("app.outbox")
	require.True(t, known)
	// Created without a character set: the database's default, not
	// tracked, is not known.
	require.Equal(t, []schema.ColumnDef{{Name: "a", DataType: "int", Sign: schema.Signed}, {Name: "b", DataType: "varchar"}}, def.Columns)
}

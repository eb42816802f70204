package binlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/schema"
)

func defsOf(spec string) []schema.ColumnDef {
	var out []schema.ColumnDef
	for _, f := range strings.Split(spec, ",") {
		name, tp, _ := strings.Cut(strings.TrimSpace(f), " ")
		out = append(out, schema.ColumnDef{Name: name, DataType: tp})
	}
	return out
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
		{"drop missing", "ALTER TABLE outbox DROP COLUMN nope", "", true, ""},
		{"drop if exists", "ALTER TABLE outbox DROP COLUMN IF EXISTS nope", start, false, ""},
		{"modify reorder", "ALTER TABLE outbox MODIFY payload TEXT FIRST", "payload text, id bigint, event_id char", false, ""},
		{"change rename retype", "ALTER TABLE outbox CHANGE id seq INT UNSIGNED AFTER payload", "event_id char, payload longtext, seq int", false, ""},
		{"rename column", "ALTER TABLE outbox RENAME COLUMN id TO seq", "seq bigint, event_id char, payload longtext", false, ""},
		{"binary types", "ALTER TABLE outbox ADD a BINARY(16), ADD b VARBINARY(8), ADD c JSON", start + ", a binary, b varbinary, c json", false, ""},
		{"index and options", "ALTER TABLE outbox ADD INDEX i (id), ENGINE=InnoDB, LOCK=NONE", start, false, ""},
		{"other table", "ALTER TABLE other ADD COLUMN a INT FIRST", start, false, ""},
		{"other database", "ALTER TABLE x.outbox ADD COLUMN a INT FIRST", start, false, ""},
		{"case differs", "ALTER TABLE OUTBOX ADD COLUMN a INT FIRST", "", true, ""},
		{"convert charset", "ALTER TABLE outbox CONVERT TO CHARACTER SET latin1", "", true, ""},
		{"two statements", "ALTER TABLE outbox DROP id; ALTER TABLE outbox ADD id INT FIRST", "id int, event_id char, payload longtext", false, ""},
		{"drop table", "DROP TABLE IF EXISTS outbox", "", false, ""},
		{"recreate", "CREATE TABLE outbox (x INT, y TEXT)", "x int, y text", false, ""},
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
			d.set("app.outbox", defsOf(start))
			res, err := d.apply(tt.query, "app")
			if tt.err {
				require.ErrorIs(t, err, errUncertainDDL)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.stmt, res.statement)
			got := d.cols["app.outbox"]
			if tt.want == "" {
				require.Nil(t, got)
				require.NotEmpty(t, d.why["app.outbox"])
				return
			}
			require.Equal(t, defsOf(tt.want), got)
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
	require.Nil(t, d.cols["app.outbox"])
	_, err = d.apply("CREATE TABLE app.outbox (a INT, b VARCHAR(9))", "")
	require.NoError(t, err)
	require.Equal(t, defsOf("a int, b varchar"), d.cols["app.outbox"])
}

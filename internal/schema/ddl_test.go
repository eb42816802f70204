package schema

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.sql golden files from DDL's output")

// TestDDLGolden compares DDL's output with reviewed statements in testdata.
// The mariadb statements are also applied to a real server by
// TestMariaDBDDLApplies; the mysql ones cannot be, as no MySQL server is
// available to the tests, so these golden strings are their only check.
func TestDDLGolden(t *testing.T) {
	tests := []struct {
		golden  string
		flavor  string
		table   string
		columns Columns
	}{
		{"mysql_default.sql", FlavorMySQL, "app.outbox", DefaultColumns()},
		{"mariadb_default.sql", FlavorMariaDB, "app.outbox", DefaultColumns()},
		{"mysql_debezium.sql", FlavorMySQL, "outbox", DebeziumColumns()},
		{"mariadb_debezium.sql", FlavorMariaDB, "outbox", DebeziumColumns()},
		{"mariadb_custom.sql", FlavorMariaDB, "`my.app`.`out``box`", Columns{
			EventID: "uuid", AggregateType: "kind", AggregateID: "entity`id", EventType: "Type",
			Payload: "body", Headers: "meta",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			got, err := DDL(tt.flavor, tt.table, tt.columns)
			require.NoError(t, err)
			path := filepath.Join("testdata", tt.golden)
			if *updateGolden {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), got)
		})
	}
}

// TestDDLDefaultMySQLInline spells out the main statement in the test, so a
// reader sees the contract without opening testdata.
func TestDDLDefaultMySQLInline(t *testing.T) {
	got, err := DDL("mysql", "app.outbox", DefaultColumns())
	require.NoError(t, err)
	require.Equal(t, "CREATE TABLE `app`.`outbox` (\n"+
		"  `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,\n"+
		"  `event_id` CHAR(36) NOT NULL,\n"+
		"  `aggregate_type` VARCHAR(255) NOT NULL,\n"+
		"  `aggregate_id` VARCHAR(255) NOT NULL,\n"+
		"  `event_type` VARCHAR(255) NOT NULL,\n"+
		"  `payload` JSON NULL,\n"+
		"  `created_at` TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),\n"+
		"  `schema_version` INT NULL,\n"+
		"  `traceparent` VARCHAR(55) NULL,\n"+
		"  `headers` JSON NULL,\n"+
		"  PRIMARY KEY (`id`),\n"+
		"  UNIQUE KEY `event_id` (`event_id`)\n"+
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;\n", got)
}

func TestDDLErrors(t *testing.T) {
	withAggregateID := func(name string) Columns {
		c := DefaultColumns()
		c.AggregateID = name
		return c
	}
	tests := []struct {
		name    string
		flavor  string
		table   string
		columns Columns
		wantErr string
	}{
		{"unknown flavor", "postgres", "outbox", DefaultColumns(), `outbox DDL: unknown flavor "postgres"; use mysql or mariadb`},
		{"flavor is case-sensitive", "MySQL", "outbox", DefaultColumns(), `unknown flavor "MySQL"`},
		{"empty table", "mysql", "", DefaultColumns(), "empty name"},
		{"three parts", "mysql", "a.b.c", DefaultColumns(), "more than two parts"},
		{"bad quoting", "mysql", "`a", DefaultColumns(), "unterminated backtick"},
		{"invalid columns", "mysql", "outbox", withAggregateID(""), "--column-aggregate-id"},
		{"surrogate key name taken", "mariadb", "outbox", withAggregateID("ID"), `column "ID" of the aggregate id is the name of the generated primary key; set --column-aggregate-id to another name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DDL(tt.flavor, tt.table, tt.columns)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}

package binlog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// charsetChanges are DDL statements that change character sets, run one
// after the other on a real server.
var charsetChanges = []string{
	`CREATE TABLE outbox (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36) NOT NULL,
		a VARCHAR(20) CHARACTER SET latin1, b TEXT CHARACTER SET cp1250 COLLATE cp1250_czech_cs,
		c VARCHAR(10) COLLATE utf8mb4_uca1400_ai_ci, d VARBINARY(16), e BINARY(8), f JSON, g TINYTEXT,
		h DECIMAL(10,2) UNSIGNED, i INT, j CHAR(3) BINARY, k MEDIUMTEXT CHARACTER SET utf16,
		l VARCHAR(5) CHARACTER SET ucs2, m TEXT CHARACTER SET utf32, n TINYINT UNSIGNED, o LONGBLOB) DEFAULT CHARSET=utf8mb4`,
	"ALTER TABLE outbox ADD p VARCHAR(5), DEFAULT CHARSET=latin2",
	"ALTER TABLE outbox MODIFY a VARCHAR(30)",
	"ALTER TABLE outbox CHANGE b b2 TEXT CHARACTER SET koi8r",
	"ALTER TABLE outbox COLLATE cp1251_bin",
	"ALTER TABLE outbox ADD q TEXT, ADD r SMALLINT UNSIGNED FIRST",
	"ALTER TABLE outbox CONVERT TO CHARACTER SET utf8mb4",
	"ALTER TABLE outbox CONVERT TO CHARACTER SET latin1 COLLATE latin1_german2_ci",
	"ALTER TABLE outbox CONVERT TO CHARACTER SET utf16",
	"ALTER TABLE outbox MODIFY c VARCHAR(10) COLLATE utf8mb4_uca1400_ai_ci, MODIFY g TINYTEXT CHARACTER SET utf8mb3",
	"ALTER TABLE outbox DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_as_cs, ADD s VARCHAR(3), ALGORITHM=INPLACE",
	"ALTER TABLE outbox CHARACTER SET ucs2, ADD t CHAR(2) AFTER id",
	"ALTER TABLE outbox CONVERT TO CHARACTER SET cp1250",
}

// TestDefinitionsMatchServer applies each statement of charsetChanges to
// a real MariaDB and to the tracked definition, and compares the tracked
// definition with information_schema's after each: column names, types,
// character sets and signs, and the table's default character set.
func TestDefinitionsMatchServer(t *testing.T) {
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	db := devenv.CreateDatabase(t, m, "cs")
	d := newDefinitions(newOutboxSet([]schema.TableName{{Database: "cs", Table: "outbox"}}))
	for _, q := range charsetChanges {
		mustExec(t, db, q)
		_, err := d.apply(q, "cs")
		require.NoError(t, err, q)
		got, known := d.known("cs.outbox")
		require.True(t, known, "%s: %s", q, d.why["cs.outbox"])
		want, err := schema.TableDefinition(context.Background(), db, "cs", "outbox")
		require.NoError(t, err)
		// MariaDB's JSON is a LONGTEXT; the parser keeps the name.
		for i := range got.Columns {
			if got.Columns[i].DataType == "json" {
				got.Columns[i].DataType = "longtext"
			}
		}
		require.Equal(t, want, got, q)
	}
	t.Logf("%d statements, the tracked definition equal to information_schema's after each", len(charsetChanges))
}

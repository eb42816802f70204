package test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestTransactionShapes writes each transaction shape of
// docs/transaction-shapes.md (except XA and the transaction larger than
// one Kafka transaction, tested on their own) while the router runs, and checks by
// event_id what a read_committed consumer reads: exactly the outbox rows
// the database committed, each once.
func TestTransactionShapes(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec("CREATE TABLE audit (id BIGINT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(64)) ENGINE=MyISAM")
	r := harness.StartRouter(t, e.Args("shapes", "--start", "latest")...)
	require.NoError(t, r.WaitLog(ctxTimeout(t, 30*time.Second), "no checkpoint stored"))
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	ctx := t.Context()
	conn, err := e.DB.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	run := func(q string, args ...any) {
		t.Helper()
		_, err := conn.ExecContext(ctx, q, args...)
		require.NoError(t, err, q)
	}
	insert := func(typ string) string {
		t.Helper()
		ev := harness.NewEvent("agg-shapes", typ, `{"shape":"`+typ+`"}`)
		require.NoError(t, harness.InsertEvent(conn, ev), typ)
		return ev.ID
	}

	want := map[string]string{} // event_id -> shape
	keep := func(shape string, ids ...string) {
		for _, id := range ids {
			want[id] = shape
		}
	}
	gone := map[string]string{} // rows the database did not commit

	// plain: one autocommitted INSERT.
	keep("plain", insert("Plain"))

	// multi-statement: a business row and three outbox rows.
	run("BEGIN")
	run("INSERT INTO orders (customer, total) VALUES ('c', 1)")
	keep("multi-statement", insert("Multi"), insert("Multi"), insert("Multi"))
	run("COMMIT")

	// savepoint rollback: only the rows outside the rolled-back part.
	run("BEGIN")
	keep("savepoint", insert("Savepoint"))
	run("SAVEPOINT s1")
	gone[insert("SavepointRolledBack")] = "savepoint"
	gone[insert("SavepointRolledBack")] = "savepoint"
	run("ROLLBACK TO SAVEPOINT s1")
	keep("savepoint", insert("Savepoint"))
	run("COMMIT")

	// A rolled-back transaction publishes nothing.
	run("BEGIN")
	gone[insert("RolledBack")] = "rollback"
	run("ROLLBACK")

	// DDL with implicit commit: the DDL commits the open transaction; the
	// row after it is its own (autocommitted) transaction, so the ROLLBACK
	// has nothing to undo.
	run("BEGIN")
	beforeDDL := insert("BeforeDDL")
	run("CREATE TABLE implicit_commit (id INT PRIMARY KEY)")
	afterDDL := insert("AfterDDL")
	run("ROLLBACK")
	keep("DDL implicit commit", beforeDDL, afterDDL)

	// standalone DDL, including on the outbox table itself.
	run("ALTER TABLE orders ADD COLUMN note VARCHAR(32) NULL")
	run("ALTER TABLE outbox ADD COLUMN extra VARCHAR(8) NULL")
	keep("standalone DDL", insert("AfterAlter"))

	// non-transactional (MyISAM) table mixed in: its row stays even when
	// the transaction rolls back; the outbox row follows the transaction.
	run("BEGIN")
	keep("MyISAM mixed", insert("WithMyISAM"))
	run("INSERT INTO audit (note) VALUES ('committed')")
	run("COMMIT")
	run("BEGIN")
	gone[insert("WithMyISAMRolledBack")] = "MyISAM mixed"
	run("INSERT INTO audit (note) VALUES ('kept although rolled back')")
	run("ROLLBACK")

	// statement-format events of other tables are ignored; the session
	// returns to ROW for the outbox row.
	run("SET SESSION binlog_format = 'STATEMENT'")
	run("INSERT INTO orders (customer, total) VALUES ('statement', 2)")
	run("UPDATE orders SET total = total + 1 WHERE customer = 'statement'")
	run("SET SESSION binlog_format = 'ROW'")
	keep("after statement-format events", insert("AfterStatement"))

	var audit int
	require.NoError(t, e.DB.QueryRow("SELECT COUNT(*) FROM audit").Scan(&audit))
	assert.Equal(t, 2, audit, "the MyISAM rows survive the rollback")
	committed := committedIDs(t, e.DB)
	for id, shape := range want {
		assert.True(t, committed[id], "%s row %s is in the table", shape, id)
	}
	for id, shape := range gone {
		assert.False(t, committed[id], "%s row %s was rolled back", shape, id)
	}

	recs := c.Read(len(want), time.Minute)
	recs = append(recs, c.Quiet(time.Second)...)
	seen := map[string]int{}
	gtids := map[string]string{}
	for _, rec := range recs {
		id, _ := harness.Header(rec, "id")
		seen[id]++
		gtids[id], _ = harness.Header(rec, "binlog_gtid")
	}
	for id, shape := range want {
		assert.Equal(t, 1, seen[id], "%s row %s read once", shape, id)
	}
	for id, shape := range gone {
		assert.Zero(t, seen[id], "%s row %s never published", shape, id)
	}
	assert.Len(t, recs, len(want), "nothing else read")
	assert.NotEqual(t, gtids[beforeDDL], gtids[afterDDL], "the DDL's implicit commit ends a transaction: the rows around it are in two")
	t.Logf("consumer read %d records (%d rows committed in the shapes, %d rolled back, 0 of them read); GTIDs around the DDL: %s, %s",
		len(recs), len(want), len(gone), gtids[beforeDDL], gtids[afterDDL])
	require.Equal(t, 0, r.Stop(20*time.Second))
	e.WaitCheckpoint("shapes", e.GTIDPos())
}

// committedIDs returns the event ids in the outbox table.
func committedIDs(t testing.TB, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "SELECT event_id FROM outbox")
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		out[id] = true
	}
	require.NoError(t, rows.Err())
	return out
}

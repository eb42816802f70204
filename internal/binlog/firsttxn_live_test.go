package binlog

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// TestFirstTxnLive reads a transaction with rows of a business table, two
// single-row and one three-row outbox INSERT, an outbox UPDATE and DELETE,
// and checks every event as a replica receives it, with the GTID event's
// position as SHOW BINLOG EVENTS gives it.
func TestFirstTxnLive(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts mariadbd (runs in make test)")
	}
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	db := devenv.CreateDatabase(t, m, "shop")
	ddl, err := schema.DDL("mariadb", "outbox", schema.DebeziumColumns())
	require.NoError(t, err)
	mustExec(t, db, ddl, "CREATE TABLE orders (id INT PRIMARY KEY)")
	before := binlogPos(t, db)
	row := func(id string) string {
		return "('" + id + "', 'order', 'o-1', 'OrderCreated', '{}')"
	}
	const insert = "INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES "
	mustExec(t, db, "BEGIN", "INSERT INTO orders VALUES (1)",
		insert+row("00000000-0000-0000-0000-000000000001"),
		insert+row("00000000-0000-0000-0000-000000000002"),
		insert+strings.Join([]string{row("00000000-0000-0000-0000-000000000003"), row("00000000-0000-0000-0000-000000000004"), row("00000000-0000-0000-0000-000000000005")}, ","),
		"UPDATE outbox SET payload = '[]' WHERE id = '00000000-0000-0000-0000-000000000001'",
		"DELETE FROM outbox WHERE id = '00000000-0000-0000-0000-000000000002'",
		"COMMIT")
	want := binlogPos(t, db)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Open(ctx, Config{Addr: m.Addr(), User: "root", ServerID: 3000 + uint32(time.Now().UnixNano()%1000),
		Tables: []schema.TableName{{Database: "shop", Table: "outbox"}}, Columns: schema.DebeziumColumns()})
	require.NoError(t, err)
	defer r.Close()
	from, err := gtid.Parse(gtid.MariaDB, before)
	require.NoError(t, err)
	var got []TxnEvent
	txn, err := r.FirstTxn(ctx, from, func(e TxnEvent) error { got = append(got, e); return nil })
	require.NoError(t, err)
	assert.Equal(t, want, txn)

	kinds := make([]EventKind, len(got))
	for i, e := range got {
		kinds[i] = e.Kind
	}
	assert.Equal(t, []EventKind{EventGTID,
		EventTableMap, EventRows, // orders
		EventTableMap, EventRows, EventTableMap, EventRows, EventTableMap, EventRows, // outbox INSERTs
		EventTableMap, EventRows, EventTableMap, EventRows, // UPDATE, DELETE
		EventCommit}, kinds)
	rows := func(i int) [3]any { return [3]any{got[i].Outbox, got[i].Insert, got[i].Rows} }
	assert.Equal(t, [3]any{false, true, 1}, rows(2), "the business row")
	assert.Equal(t, [3]any{true, true, 1}, rows(4))
	assert.Equal(t, [3]any{true, true, 1}, rows(6))
	assert.Equal(t, [3]any{true, true, 3}, rows(8))
	assert.Equal(t, [3]any{true, false, 1}, rows(10), "the UPDATE")
	assert.Equal(t, [3]any{true, false, 1}, rows(12), "the DELETE")

	// The GTID event is where SHOW BINLOG EVENTS has it.
	var file string
	var pos uint32
	rs, err := db.Query("SHOW BINLOG EVENTS IN '" + got[0].File + "'")
	require.NoError(t, err)
	defer rs.Close()
	for rs.Next() {
		var logName, typ, info string
		var p, serverID, end uint32
		require.NoError(t, rs.Scan(&logName, &p, &typ, &serverID, &end, &info))
		if typ == "Gtid" && strings.Contains(info, "GTID "+want) {
			file, pos = logName, p
		}
	}
	assert.Equal(t, got[0].File, file)
	assert.Equal(t, pos, got[0].Pos, "the GTID event's position")
	for _, e := range got[1:] {
		assert.Greater(t, e.Pos, pos, "events after the GTID event")
	}
}

package binlog

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// liveRows runs a Reader on database.outbox from GTID set from until it
// has handed over n rows, or stopped with an error, or 30 s passed; it
// returns the rows and the reader's error (nil when it was still running).
// during, when set, runs once the reader has handed over its first row
// (while it is live, past reading information_schema).
func liveRows(t *testing.T, m *devenv.MariaDB, database, from string, n int, during func()) ([]OutboxRow, error) {
	t.Helper()
	return liveRowsFrom(t, m, database, from, nil, n, during)
}

// liveRowsFrom is liveRows with the definitions a checkpoint gives
// (Reader.SetLayouts).
func liveRowsFrom(t *testing.T, m *devenv.MariaDB, database, from string, layouts map[string]schema.TableDef, n int, during func()) ([]OutboxRow, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Open(ctx, Config{Addr: m.Addr(), User: "root", ServerID: 3000 + uint32(time.Now().UnixNano()%1000),
		Tables:  []schema.TableName{{Database: database, Table: "outbox"}},
		Columns: schema.DefaultColumns()})
	require.NoError(t, err)
	defer r.Close()
	r.SetLayouts(layouts)
	start, err := gtid.Parse(gtid.MariaDB, from)
	require.NoError(t, err)
	q := NewQueue(4096, 4<<20)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.Run(runCtx, start, q) }()
	var rows []OutboxRow
	ran := false
	for len(rows) < n {
		if !ran && during != nil && len(rows) > 0 {
			ran = true
			during()
		}
		select {
		case <-q.Ready():
		case <-ctx.Done():
			stop()
			<-done
			t.Fatalf("%d of %d rows after 30 s", len(rows), n)
		}
		b, closed := q.Take()
		for _, row := range b.Rows {
			row.Txn = nil
			rows = append(rows, row)
		}
		if closed && b.Empty() {
			stop()
			<-done
			return rows, q.Err()
		}
	}
	stop()
	<-done
	return rows, nil
}

func binlogPos(t *testing.T, db *sql.DB) string {
	var pos string
	require.NoError(t, db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos))
	return pos
}

func mustExec(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
}

// insert writes one outbox row whose fields all name i, by column name.
func insertEvent(t *testing.T, db *sql.DB, i int) {
	t.Helper()
	_, err := db.Exec("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, ?, ?, ?, ?)",
		fmt.Sprintf("00000000-0000-0000-0000-%012d", i), fmt.Sprintf("type%d", i), fmt.Sprintf("agg%d", i),
		fmt.Sprintf("ev%d", i), fmt.Sprintf(`{"n":%d}`, i))
	require.NoError(t, err)
}

func requireEvents(t *testing.T, rows []OutboxRow, first int) {
	t.Helper()
	for k, r := range rows {
		i := first + k
		require.Equal(t, fmt.Sprintf("00000000-0000-0000-0000-%012d", i), string(r.EventID), "row %d", k)
		require.Equal(t, fmt.Sprintf("type%d", i), string(r.AggregateType), "row %d", k)
		require.Equal(t, fmt.Sprintf("agg%d", i), string(r.AggregateID), "row %d", k)
		require.Equal(t, fmt.Sprintf("ev%d", i), string(r.EventType), "row %d", k)
		require.Equal(t, fmt.Sprintf(`{"n":%d}`, i), string(r.Payload), "row %d", k)
	}
}

// layoutChanges are the DDL statements run between inserts: columns added
// FIRST and AFTER, dropped, reordered, renamed, retyped, several in one
// statement, ALGORITHM=INSTANT.
var layoutChanges = []string{
	"ALTER TABLE outbox ADD COLUMN extra1 INT NULL FIRST, ALGORITHM=INSTANT",
	"ALTER TABLE outbox ADD COLUMN extra2 VARCHAR(20) NULL AFTER aggregate_type",
	"ALTER TABLE outbox MODIFY aggregate_id VARCHAR(255) NOT NULL AFTER event_id",
	"ALTER TABLE outbox DROP COLUMN extra1, ADD COLUMN extra3 BIGINT NULL AFTER event_id, MODIFY event_type VARCHAR(255) NOT NULL FIRST",
	"ALTER TABLE outbox RENAME COLUMN extra2 TO extra4, CHANGE extra3 extra5 TEXT NULL",
	"ALTER TABLE outbox MODIFY extra5 VARCHAR(30) NULL",
	"ALTER TABLE outbox ADD COLUMN extra6 INT NULL, ALGORITHM=INSTANT",
	"ALTER TABLE outbox CHANGE aggregate_type aggregate_type VARCHAR(200) NOT NULL AFTER payload",
}

func TestLayoutChangesWithMinimalMetadata(t *testing.T) {
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=MINIMAL"}})
	ddl, err := schema.DDL(schema.FlavorMariaDB, "outbox", schema.DefaultColumns())
	require.NoError(t, err)

	t.Run("created and changed while behind", func(t *testing.T) {
		// The table's whole history is in the range: CREATE TABLE gives
		// its first layout and each ALTER is applied to it.
		db := devenv.CreateDatabase(t, m, "behind")
		from := binlogPos(t, db)
		mustExec(t, db, ddl)
		n := 0
		insertEvent(t, db, n)
		n++
		for _, q := range layoutChanges {
			mustExec(t, db, q)
			insertEvent(t, db, n)
			insertEvent(t, db, n+1)
			n += 2
		}
		rows, err := liveRows(t, m, "behind", from, n, nil)
		require.NoError(t, err)
		require.Len(t, rows, n)
		requireEvents(t, rows, 0)
		t.Logf("%d layout changes, %d rows, every field right", len(layoutChanges), len(rows))
	})

	t.Run("changed while live", func(t *testing.T) {
		db := devenv.CreateDatabase(t, m, "live")
		mustExec(t, db, ddl)
		from := binlogPos(t, db)
		n := 2*len(layoutChanges) + 1
		insertEvent(t, db, 0)
		rows, err := liveRows(t, m, "live", from, n, func() {
			for i, q := range layoutChanges {
				mustExec(t, db, q)
				insertEvent(t, db, 2*i+1)
				insertEvent(t, db, 2*i+2)
			}
		})
		require.NoError(t, err)
		require.Len(t, rows, n)
		requireEvents(t, rows, 0)
	})

	t.Run("changed before the router started", func(t *testing.T) {
		// The rows before the ALTER were written with a layout that no
		// longer exists anywhere: stop before the first of them.
		db := devenv.CreateDatabase(t, m, "before")
		mustExec(t, db, ddl)
		from := binlogPos(t, db)
		insertEvent(t, db, 0)
		insertEvent(t, db, 1)
		mustExec(t, db, "ALTER TABLE outbox MODIFY aggregate_id VARCHAR(255) NOT NULL AFTER event_id")
		insertEvent(t, db, 2)
		rows, err := liveRows(t, m, "before", from, 1, nil)
		require.Error(t, err)
		require.Empty(t, rows)
		require.ErrorIs(t, err, ErrUnmappable)
		require.NotErrorIs(t, err, ErrServerConfig, "a layout lost to a DDL is not a server setting")
		require.ErrorContains(t, err, "binlog_row_metadata=FULL")
		t.Logf("stop: %v", err)

		// From after the ALTER, the information_schema layout holds.
		rows, err = liveRows(t, m, "before", binlogPosAfterAlter(t, db), 1, nil)
		require.NoError(t, err)
		requireEvents(t, rows, 2)
	})

	t.Run("untouched table read from information_schema", func(t *testing.T) {
		db := devenv.CreateDatabase(t, m, "untouched")
		mustExec(t, db, ddl, "ALTER TABLE outbox ADD COLUMN extra INT NULL FIRST")
		from := binlogPos(t, db)
		insertEvent(t, db, 0)
		insertEvent(t, db, 1)
		rows, err := liveRows(t, m, "untouched", from, 2, nil)
		require.NoError(t, err)
		requireEvents(t, rows, 0)
	})
}

// binlogPosAfterAlter is the GTID set of everything before the last
// insert: the ALTER and the rows before it.
func binlogPosAfterAlter(t *testing.T, db *sql.DB) string {
	var domain, server, seq int
	pos := binlogPos(t, db)
	_, err := fmt.Sscanf(pos, "%d-%d-%d", &domain, &server, &seq)
	require.NoError(t, err)
	return fmt.Sprintf("%d-%d-%d", domain, server, seq-1)
}

func TestSettingsChangedAtRuntime(t *testing.T) {
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	ddl, err := schema.DDL(schema.FlavorMariaDB, "outbox", schema.DefaultColumns())
	require.NoError(t, err)

	t.Run("binlog_row_image=MINIMAL", func(t *testing.T) {
		db := devenv.CreateDatabase(t, m, "image")
		mustExec(t, db, ddl)
		from := binlogPos(t, db)
		insertEvent(t, db, 0)
		conn, err := db.Conn(context.Background())
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.ExecContext(context.Background(), "SET SESSION binlog_row_image=MINIMAL")
		require.NoError(t, err)
		// With a minimal image only the columns given are logged.
		_, err = conn.ExecContext(context.Background(), "INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type) VALUES ('00000000-0000-0000-0000-000000000001', 't', 'a', 'e')")
		require.NoError(t, err)
		rows, err := liveRows(t, m, "image", from, 2, nil)
		require.Error(t, err)
		require.Len(t, rows, 1, "the row before the setting changed")
		requireEvents(t, rows, 0)
		require.ErrorIs(t, err, ErrUnmappable)
		require.ErrorIs(t, err, ErrServerConfig, "a server setting (exit 2)")
		require.ErrorContains(t, err, "binlog_row_image=FULL")
		t.Logf("stop: %v", err)
	})

	t.Run("binlog_format=STATEMENT", func(t *testing.T) {
		db := devenv.CreateDatabase(t, m, "format")
		mustExec(t, db, ddl)
		from := binlogPos(t, db)
		insertEvent(t, db, 0)
		conn, err := db.Conn(context.Background())
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.ExecContext(context.Background(), "SET SESSION binlog_format=STATEMENT")
		require.NoError(t, err)
		_, err = conn.ExecContext(context.Background(), "INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES ('00000000-0000-0000-0000-000000000001', 't', 'a', 'e', '{}')")
		require.NoError(t, err)
		rows, err := liveRows(t, m, "format", from, 2, nil)
		require.Error(t, err)
		require.Len(t, rows, 1)
		require.ErrorIs(t, err, ErrStatementFormat)
		require.ErrorIs(t, err, ErrServerConfig, "a server setting (exit 2)")
		require.ErrorContains(t, err, "binlog_format=ROW")
		t.Logf("stop: %v", err)
	})
}

// A checkpoint of an earlier version holds the layout without character
// sets and signs. binlog_row_metadata=NO_LOG: the binlog has none either.
// Where no DDL touched the table since, information_schema completes it
// and the rows convert; where one did, a row before it whose text column's
// character set is not known stops the reader, never guessed.
func TestLegacyLayouts(t *testing.T) {
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=NO_LOG"}})
	ddl := `CREATE TABLE outbox (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36) NOT NULL, aggregate_type VARCHAR(64) NOT NULL,
		aggregate_id BIGINT UNSIGNED NOT NULL, event_type VARCHAR(64) NOT NULL, payload TEXT NULL) DEFAULT CHARSET=latin1`
	legacy := func(db string) map[string]schema.TableDef {
		return map[string]schema.TableDef{db + ".outbox": {Columns: []schema.ColumnDef{{Name: "id", DataType: "bigint"}, {Name: "event_id", DataType: "char"},
			{Name: "aggregate_type", DataType: "varchar"}, {Name: "aggregate_id", DataType: "bigint"}, {Name: "event_type", DataType: "varchar"},
			{Name: "payload", DataType: "text"}}}}
	}
	insert := func(db *sql.DB, i int) {
		_, err := db.Exec("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'Café', 18446744073709551615, 'Müller', ?)",
			fmt.Sprintf("00000000-0000-0000-0000-%012d", i), fmt.Sprintf(`{"n":"é%d"}`, i))
		require.NoError(t, err)
	}

	t.Run("untouched since", func(t *testing.T) {
		db := devenv.CreateDatabase(t, m, "legacy1")
		mustExec(t, db, ddl)
		from := binlogPos(t, db)
		insert(db, 0)
		rows, err := liveRowsFrom(t, m, "legacy1", from, legacy("legacy1"), 1, nil)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.Equal(t, "Café", string(rows[0].AggregateType))
		require.Equal(t, "18446744073709551615", string(rows[0].AggregateID))
		require.Equal(t, `{"n":"é0"}`, string(rows[0].Payload))
	})

	t.Run("touched since", func(t *testing.T) {
		db := devenv.CreateDatabase(t, m, "legacy2")
		mustExec(t, db, ddl)
		from := binlogPos(t, db)
		insert(db, 0)
		mustExec(t, db, "ALTER TABLE outbox ADD COLUMN note INT NULL")
		insert(db, 1)
		rows, err := liveRowsFrom(t, m, "legacy2", from, legacy("legacy2"), 1, nil)
		require.Error(t, err)
		require.Empty(t, rows)
		require.ErrorIs(t, err, ErrUnmappable)
		require.ErrorContains(t, err, "its character set is not known")
		require.ErrorContains(t, err, "binlog_row_metadata=MINIMAL or FULL")
		t.Logf("stop: %v", err)

		// From after the ALTER, information_schema's definition holds.
		rows, err = liveRowsFrom(t, m, "legacy2", binlogPosAfterAlter(t, db), nil, 1, nil)
		require.NoError(t, err)
		require.Equal(t, `{"n":"é1"}`, string(rows[0].Payload))
	})
}

package outbox_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/outbox"
)

// storedRow is an outbox row read back from the server.
type storedRow struct {
	ID            int64
	EventID       string
	AggregateType string
	AggregateID   string
	EventType     string
	Payload       sql.NullString
	CreatedAt     time.Time
	SchemaVersion sql.NullInt64
	Traceparent   sql.NullString
	Headers       sql.NullString
}

// readRows returns every row of table (default columns) in insert order.
func readRows(t *testing.T, db *sql.DB, table string) []storedRow {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT id, event_id, aggregate_type, aggregate_id, event_type, payload, "+
		"created_at, schema_version, traceparent, headers FROM "+table+" ORDER BY id")
	require.NoError(t, err)
	defer rows.Close()
	var out []storedRow
	for rows.Next() {
		var r storedRow
		require.NoError(t, rows.Scan(&r.ID, &r.EventID, &r.AggregateType, &r.AggregateID, &r.EventType, &r.Payload,
			&r.CreatedAt, &r.SchemaVersion, &r.Traceparent, &r.Headers))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// inTx runs f in a transaction and commits it, or rolls back when f fails
// or rollback is set.
func inTx(t *testing.T, db *sql.DB, rollback bool, f func(tx *sql.Tx) error) error {
	t.Helper()
	tx, err := db.BeginTx(t.Context(), nil)
	require.NoError(t, err)
	if err := f(tx); err != nil {
		require.NoError(t, tx.Rollback())
		return err
	}
	if rollback {
		return tx.Rollback()
	}
	return tx.Commit()
}

// createTable creates table with w's MariaDB DDL.
func createTable(t *testing.T, db *sql.DB, w *outbox.Writer) {
	t.Helper()
	ddl, err := w.DDL(outbox.FlavorMariaDB)
	require.NoError(t, err)
	_, err = db.ExecContext(t.Context(), ddl)
	require.NoError(t, err, "applying:\n%s", ddl)
}

// TestWithMariaDB writes events into a private MariaDB and reads the rows
// back. One server serves every subtest; each subtest has its own table.
func TestWithMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a MariaDB server")
	}
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	db := devenv.CreateDatabase(t, m, "app")

	// The package-level functions: the default DDL applies, Insert writes
	// to "outbox" in the connection's database.
	t.Run("DefaultTable", func(t *testing.T) {
		ddl, err := outbox.DDL(outbox.FlavorMariaDB)
		require.NoError(t, err)
		_, err = db.ExecContext(t.Context(), ddl)
		require.NoError(t, err, "applying:\n%s", ddl)

		var id uuid.UUID
		require.NoError(t, inTx(t, db, false, func(tx *sql.Tx) error {
			id, err = outbox.Insert(t.Context(), tx, outbox.Event{
				AggregateType: "order", AggregateID: "1001", Type: "OrderCreated", Payload: map[string]any{"total": "42.50"}})
			return err
		}))
		rows := readRows(t, db, "outbox")
		require.Len(t, rows, 1)
		assert.Equal(t, id.String(), rows[0].EventID)
		assert.JSONEq(t, `{"total":"42.50"}`, rows[0].Payload.String)
	})

	t.Run("CommittedEventHasEveryColumn", func(t *testing.T) {
		w := outbox.New("app.full")
		createTable(t, db, w)
		before := time.Now().Add(-time.Second)
		e := outbox.Event{
			AggregateType: "order",
			AggregateID:   "Zoë-1002",
			Type:          "OrderCreated",
			Payload:       map[string]any{"order_id": 1002, "note": "Grüße 🚚 <&>", "total": "19.90"},
			SchemaVersion: ptr(3),
			Traceparent:   traceparent,
			Headers:       map[string]string{"tenant": "acme", "source": "checkout"},
		}
		var id uuid.UUID
		require.NoError(t, inTx(t, db, false, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(t.Context(), "CREATE TABLE IF NOT EXISTS app.orders (id INT PRIMARY KEY)"); err != nil {
				return err
			}
			var err error
			id, err = w.Insert(t.Context(), tx, e)
			return err
		}))
		assert.Equal(t, uuid.Version(7), id.Version())

		rows := readRows(t, db, "app.full")
		require.Len(t, rows, 1)
		r := rows[0]
		assert.Equal(t, id.String(), r.EventID)
		assert.Equal(t, "order", r.AggregateType)
		assert.Equal(t, "Zoë-1002", r.AggregateID)
		assert.Equal(t, "OrderCreated", r.EventType)
		require.True(t, r.Payload.Valid)
		assert.JSONEq(t, `{"order_id":1002,"note":"Grüße 🚚 <&>","total":"19.90"}`, r.Payload.String)
		assert.Contains(t, r.Payload.String, "<&>", "no HTML escaping")
		assert.WithinRange(t, r.CreatedAt, before, time.Now().Add(time.Second))
		assert.Equal(t, sql.NullInt64{Int64: 3, Valid: true}, r.SchemaVersion)
		assert.Equal(t, sql.NullString{String: traceparent, Valid: true}, r.Traceparent)
		require.True(t, r.Headers.Valid)
		assert.JSONEq(t, `{"source":"checkout","tenant":"acme"}`, r.Headers.String)
	})

	t.Run("RollbackWritesNothing", func(t *testing.T) {
		w := outbox.New("app.rolledback")
		createTable(t, db, w)
		require.NoError(t, inTx(t, db, true, func(tx *sql.Tx) error {
			_, err := w.InsertMany(t.Context(), tx, validEvent(), validEvent())
			return err
		}))
		assert.Empty(t, readRows(t, db, "app.rolledback"))
	})

	t.Run("InsertManyKeepsOrderAndIDs", func(t *testing.T) {
		w := outbox.New("app.many")
		createTable(t, db, w)
		given := uuid.MustParse("0b6a3f0e-6b8e-4f57-9d43-5a1f2f0c6c11") // a v4 id is kept as it is
		es := []outbox.Event{
			{AggregateType: "order", AggregateID: "1", Type: "OrderCreated", Payload: json.RawMessage(`{"b": 1,  "a": [true]}`)},
			{ID: given, AggregateType: "order", AggregateID: "1", Type: "OrderPaid", Payload: []byte(`"paid"`), SchemaVersion: ptr(-1)},
			{AggregateType: "invoice", AggregateID: "7", Type: "InvoiceSent", Payload: "a string"},
		}
		var ids []uuid.UUID
		require.NoError(t, inTx(t, db, false, func(tx *sql.Tx) error {
			var err error
			ids, err = w.InsertMany(t.Context(), tx, es...)
			return err
		}))
		require.Len(t, ids, 3)
		assert.Equal(t, given, ids[1])
		rows := readRows(t, db, "app.many")
		require.Len(t, rows, 3)
		for i, r := range rows {
			assert.Equal(t, ids[i].String(), r.EventID)
			assert.Equal(t, es[i].Type, r.EventType)
			assert.Equal(t, es[i].AggregateID, r.AggregateID)
		}
		// MariaDB keeps JSON text as written: raw payloads pass through byte for byte.
		assert.Equal(t, `{"b": 1,  "a": [true]}`, rows[0].Payload.String)
		assert.Equal(t, `"paid"`, rows[1].Payload.String)
		assert.Equal(t, `"a string"`, rows[2].Payload.String)
		assert.Equal(t, sql.NullInt64{Int64: -1, Valid: true}, rows[1].SchemaVersion)

		_, err := w.InsertMany(t.Context(), nil)
		assert.NoError(t, err, "no events is a no-op")
	})

	t.Run("NilPayloadIsNULL", func(t *testing.T) {
		w := outbox.New("app.tombstones")
		createTable(t, db, w)
		require.NoError(t, inTx(t, db, false, func(tx *sql.Tx) error {
			_, err := w.Insert(t.Context(), tx, outbox.Event{AggregateType: "order", AggregateID: "1", Type: "OrderDeleted",
				Headers: map[string]string{}})
			return err
		}))
		rows := readRows(t, db, "app.tombstones")
		require.Len(t, rows, 1)
		assert.False(t, rows[0].Payload.Valid, "payload %q", rows[0].Payload.String)
		assert.False(t, rows[0].SchemaVersion.Valid)
		assert.False(t, rows[0].Traceparent.Valid)
		assert.False(t, rows[0].Headers.Valid, "empty headers are NULL")
	})

	t.Run("InvalidEventWritesNothing", func(t *testing.T) {
		w := outbox.New("app.invalid")
		createTable(t, db, w)
		bad := validEvent()
		bad.AggregateID = ""
		err := inTx(t, db, false, func(tx *sql.Tx) error {
			_, err := w.InsertMany(t.Context(), tx, validEvent(), bad)
			return err
		})
		var fe *outbox.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "AggregateID", fe.Field)
		assert.Equal(t, 1, fe.Index)
		assert.Empty(t, readRows(t, db, "app.invalid"))
	})

	t.Run("ServerErrorIsWrapped", func(t *testing.T) {
		e := validEvent()
		e.ID = uuid.Must(uuid.NewV7())
		err := inTx(t, db, false, func(tx *sql.Tx) error {
			_, err := outbox.New("app.no_such_table").Insert(t.Context(), tx, e)
			return err
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "outbox: inserting event "+e.ID.String()+" into app.no_such_table: ")
		var me *mysql.MySQLError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, uint16(1146), me.Number) // ER_NO_SUCH_TABLE
	})

	t.Run("V7IDsIncrease", func(t *testing.T) {
		w := outbox.New("app.ordered")
		createTable(t, db, w)
		es := make([]outbox.Event, 300)
		for i := range es {
			es[i] = validEvent()
		}
		var ids []uuid.UUID
		require.NoError(t, inTx(t, db, false, func(tx *sql.Tx) error {
			var err error
			ids, err = w.InsertMany(t.Context(), tx, es...)
			if err != nil {
				return err
			}
			for range 50 { // one at a time, as separate calls
				id, err := w.Insert(t.Context(), tx, validEvent())
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		}))
		rows := readRows(t, db, "app.ordered")
		require.Len(t, rows, len(ids))
		for i, r := range rows {
			require.Equal(t, ids[i].String(), r.EventID)
			require.Equal(t, uuid.Version(7), ids[i].Version())
			if i > 0 {
				require.Less(t, rows[i-1].EventID, r.EventID, "ids in insert order sort by time, as text too")
			}
		}
	})

	t.Run("DebeziumTable", func(t *testing.T) {
		w := outbox.New("`app`.`debezium outbox`", outbox.WithColumns(outbox.DebeziumColumns()))
		createTable(t, db, w)
		var id uuid.UUID
		require.NoError(t, inTx(t, db, false, func(tx *sql.Tx) error {
			var err error
			id, err = w.Insert(t.Context(), tx, validEvent())
			return err
		}))
		var got, aggType, aggID, typ, payload string
		require.NoError(t, db.QueryRowContext(t.Context(),
			"SELECT id, aggregatetype, aggregateid, type, payload FROM `debezium outbox`").Scan(&got, &aggType, &aggID, &typ, &payload))
		assert.Equal(t, []string{id.String(), "order", "o-1", "OrderCreated", `{"n":1}`}, []string{got, aggType, aggID, typ, payload})
	})

	// Past 65535 placeholders a batch is split: the server refuses more in
	// one prepared statement. So this subtest turns the DSN's client-side
	// interpolation off, and writes 8200 events of 8 columns.
	t.Run("LargeBatchIsSplit", func(t *testing.T) {
		cfg, err := mysql.ParseDSN(m.DSN("app"))
		require.NoError(t, err)
		cfg.InterpolateParams = false
		conn, err := sql.Open("mysql", cfg.FormatDSN())
		require.NoError(t, err)
		defer conn.Close()
		w := outbox.New("app.large")
		createTable(t, conn, w)
		const n = 65535/8 + 9
		es := make([]outbox.Event, n)
		for i := range es {
			es[i] = outbox.Event{AggregateType: "order", AggregateID: fmt.Sprint(i), Type: "OrderCreated",
				Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
		}
		var ids []uuid.UUID
		require.NoError(t, inTx(t, conn, false, func(tx *sql.Tx) error {
			ids, err = w.InsertMany(t.Context(), tx, es...)
			return err
		}))
		rows := readRows(t, db, "app.large")
		require.Len(t, rows, n)
		for i, r := range rows {
			require.Equal(t, ids[i].String(), r.EventID)
			require.Equal(t, fmt.Sprint(i), r.AggregateID)
		}
	})

	// A batch bigger than max_allowed_packet is split too: about 4 MiB of
	// values per statement. 8 MiB of payloads against a server limit of 6 MiB.
	t.Run("BigBatchFitsMaxAllowedPacket", func(t *testing.T) {
		var old int
		require.NoError(t, db.QueryRowContext(t.Context(), "SELECT @@GLOBAL.max_allowed_packet").Scan(&old))
		_, err := db.ExecContext(t.Context(), "SET GLOBAL max_allowed_packet = 6 << 20")
		require.NoError(t, err)
		t.Cleanup(func() { _, _ = db.ExecContext(context.Background(), "SET GLOBAL max_allowed_packet = ?", old) })
		conn, err := sql.Open("mysql", m.DSN("app")) // a new session: the driver reads the new limit
		require.NoError(t, err)
		defer conn.Close()

		w := outbox.New("app.big")
		createTable(t, conn, w)
		pad := strings.Repeat("x", 2<<20)
		es := make([]outbox.Event, 4)
		for i := range es {
			es[i] = outbox.Event{AggregateType: "order", AggregateID: fmt.Sprint(i), Type: "OrderCreated",
				Payload: map[string]any{"i": i, "pad": pad}}
		}
		require.NoError(t, inTx(t, conn, false, func(tx *sql.Tx) error {
			_, err := w.InsertMany(t.Context(), tx, es...)
			return err
		}))
		var count int
		require.NoError(t, conn.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM app.big WHERE LENGTH(payload) > 2 << 20").Scan(&count))
		assert.Equal(t, len(es), count)
	})

	// A canceled context stops the write with the context's error.
	t.Run("CanceledContext", func(t *testing.T) {
		w := outbox.New("app.canceled")
		createTable(t, db, w)
		tx, err := db.BeginTx(t.Context(), nil)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback() }()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err = w.Insert(ctx, tx, validEvent())
		require.ErrorIs(t, err, context.Canceled)
	})
}

package schema_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// TestMariaDBDDLApplies creates the mariadb DDL of both presets in a private
// MariaDB server, inserts a row, and checks that TableColumns and Resolve
// find every column where the row's values really are. The mysql DDL is only
// checked as golden text (TestDDLGolden): no MySQL server is available here.
func TestMariaDBDDLApplies(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a MariaDB server")
	}
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})

	const eventID = "0b6a3f0e-6b8e-4f57-9d43-5a1f2f0c6c11"
	tests := []struct {
		name      string
		columns   schema.Columns
		wantNames []string
		insert    string // inserts one row with eventID, "order", "o-1", "created", `{"n":1}`
	}{
		{
			name:    "default",
			columns: schema.DefaultColumns(),
			wantNames: []string{"id", "event_id", "aggregate_type", "aggregate_id", "event_type", "payload",
				"created_at", "schema_version", "traceparent", "headers"},
			insert: "INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload, schema_version, traceparent, headers) " +
				`VALUES (?, 'order', 'o-1', 'created', '{"n":1}', 2, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '{"tenant":"acme"}')`,
		},
		{
			name:      "debezium",
			columns:   schema.DebeziumColumns(),
			wantNames: []string{"id", "aggregatetype", "aggregateid", "type", "payload"},
			insert:    `INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (?, 'order', 'o-1', 'created', '{"n":1}')`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			database := "schema_" + tt.name
			db := devenv.CreateDatabase(t, m, database)

			ddl, err := schema.DDL(schema.FlavorMariaDB, database+".outbox", tt.columns)
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, ddl)
			require.NoError(t, err, "applying:\n%s", ddl)

			_, err = db.ExecContext(ctx, tt.insert, eventID)
			require.NoError(t, err)

			names, err := schema.TableColumns(ctx, db, database, "outbox")
			require.NoError(t, err)
			require.Equal(t, tt.wantNames, names)

			layout, err := tt.columns.Resolve(database+".outbox", names)
			require.NoError(t, err)
			require.Equal(t, len(tt.wantNames), layout.NumColumns)

			row := selectOne(t, db, "SELECT * FROM "+database+".outbox")
			require.Len(t, row, layout.NumColumns)
			require.Equal(t, eventID, string(row[layout.EventID]))
			require.Equal(t, "order", string(row[layout.AggregateType]))
			require.Equal(t, "o-1", string(row[layout.AggregateID]))
			require.Equal(t, "created", string(row[layout.EventType]))
			require.JSONEq(t, `{"n":1}`, string(row[layout.Payload]))
			if tt.name == "default" {
				require.NotEmpty(t, row[layout.CreatedAt], "created_at gets its default")
				require.Equal(t, "2", string(row[layout.SchemaVersion]))
				require.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", string(row[layout.Traceparent]))
				require.JSONEq(t, `{"tenant":"acme"}`, string(row[layout.Headers]))
			} else {
				require.Equal(t, schema.Layout{EventID: 0, AggregateType: 1, AggregateID: 2, EventType: 3, Payload: 4,
					CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 5}, layout)
			}

			// The JSON_VALID check holds, and the event id is unique.
			_, err = db.ExecContext(ctx, "INSERT INTO outbox ("+tt.columns.EventID+", "+tt.columns.AggregateType+", "+tt.columns.AggregateID+", "+
				tt.columns.EventType+", "+tt.columns.Payload+") VALUES ('e2', 'order', 'o-1', 'created', 'not json')")
			require.ErrorContains(t, err, "CONSTRAINT", "payload that is not JSON is rejected by the JSON_VALID check")
			_, err = db.ExecContext(ctx, tt.insert, eventID)
			require.ErrorContains(t, err, "Duplicate entry", "a duplicate event id is rejected")
		})
	}

	t.Run("missing table", func(t *testing.T) {
		db := devenv.CreateDatabase(t, m, "schema_missing")
		_, err := schema.TableColumns(t.Context(), db, "schema_missing", "outbox")
		require.ErrorIs(t, err, schema.ErrTableNotFound)
		require.ErrorContains(t, err, "schema_missing.outbox")
	})
}

// selectOne runs query, which must return exactly one row, and returns its
// columns as raw bytes.
func selectOne(t *testing.T, db *sql.DB, query string) [][]byte {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), query)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	require.True(t, rows.Next(), "one row")
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	require.NoError(t, rows.Scan(dest...))
	out := make([][]byte, len(raw))
	for i, r := range raw {
		out[i] = append([]byte(nil), r...)
	}
	require.False(t, rows.Next(), "only one row")
	require.NoError(t, rows.Err())
	return out
}

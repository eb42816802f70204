package main

import (
	"database/sql"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestRunAgainstMariaDB runs the example twice against a private MariaDB:
// the tables are created once, each run commits one order and its event.
func TestRunAgainstMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a MariaDB server")
	}
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	db := devenv.CreateDatabase(t, m, "shop")

	require.NoError(t, run(t.Context(), m.DSN("shop"), "Ada Lovelace", "42.50"))
	require.NoError(t, run(t.Context(), m.DSN("shop"), "Grace Hopper", "7.00"))

	rows, err := db.QueryContext(t.Context(), `SELECT o.id, o.customer, x.aggregate_type, x.event_type, x.payload
		FROM orders o JOIN outbox x ON x.aggregate_id = o.id ORDER BY x.id`)
	require.NoError(t, err)
	defer rows.Close()
	var got []OrderCreated
	for rows.Next() {
		var id int64
		var customer, aggType, eventType string
		var payload sql.NullString
		require.NoError(t, rows.Scan(&id, &customer, &aggType, &eventType, &payload))
		assert.Equal(t, "order", aggType)
		assert.Equal(t, "OrderCreated", eventType)
		var p OrderCreated
		require.NoError(t, json.Unmarshal([]byte(payload.String), &p))
		assert.Equal(t, id, p.OrderID)
		assert.Equal(t, customer, p.Customer)
		got = append(got, p)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []OrderCreated{
		{OrderID: 1001, Customer: "Ada Lovelace", Total: "42.50", Currency: "EUR"},
		{OrderID: 1002, Customer: "Grace Hopper", Total: "7.00", Currency: "EUR"},
	}, got)

	// A failed business write leaves no event behind.
	require.Error(t, run(t.Context(), m.DSN("shop"), "Bad Total", "not a number"))
	var events int
	require.NoError(t, db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM outbox").Scan(&events))
	assert.Equal(t, 2, events)
}

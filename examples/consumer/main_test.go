package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestInvoicesOnce delivers an OrderCreated event twice (as a redelivery
// or replay would) and checks that one invoice exists.
func TestInvoicesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a MariaDB server")
	}
	db := devenv.CreateDatabase(t, devenv.NewMariaDB(t, devenv.MariaDBConfig{}), "billing")
	k := devenv.NewKafka(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.AllowAutoTopicCreation())
	require.NoError(t, err)
	defer cl.Close()
	rec := func(id, payload string) *kgo.Record {
		return &kgo.Record{Topic: "outbox.event.OrderCreated", Key: []byte("1001"), Value: []byte(payload),
			Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(id)}, {Key: "event_type", Value: []byte("OrderCreated")}}}
	}
	p1 := `{"order_id":1001,"customer":"Ada Lovelace","total":"42.50","currency":"EUR"}`
	p2 := `{"order_id":1002,"customer":"Grace Hopper","total":"7.00","currency":"EUR"}`
	require.NoError(t, cl.ProduceSync(t.Context(), rec("e1", p1), rec("e2", p2), rec("e1", p1)).FirstErr())

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := newConsumer(ctx, db, k.Brokers, "billing", nil)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	require.Eventually(t, func() bool { s := c.Stats(); return s.Processed+s.Duplicates == 3 }, 30*time.Second, 20*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, int64(2), c.Stats().Processed)
	assert.Equal(t, int64(1), c.Stats().Duplicates)
	var n int
	require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM invoices").Scan(&n))
	assert.Equal(t, 2, n)
}

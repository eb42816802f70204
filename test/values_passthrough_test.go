package test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestBinaryPayloadPassthroughAvro writes Confluent-wire-format Avro,
// serialized by hamba/avro, into LONGBLOB and VARBINARY payload columns
// with --validate-json=false: a consumer reads every value byte for byte
// (an Avro body ending in 0x00, bytes that are not UTF-8, the schema id)
// and decodes it with hamba/avro to the record written.
func TestBinaryPayloadPassthroughAvro(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec("CREATE TABLE outbox_blob LIKE outbox")
	e.Exec("ALTER TABLE outbox_blob MODIFY payload LONGBLOB NULL")
	e.Exec("CREATE TABLE outbox_varbin LIKE outbox")
	e.Exec("ALTER TABLE outbox_varbin MODIFY payload VARBINARY(4096) NULL")

	type written struct {
		schemaID uint32
		order    avroOrder
		wire     []byte
	}
	orders := []avroOrder{
		{ID: 1, Customer: "Zoë € 😀", Total: 12.5},     // the body ends in 0x00 (zero = 0)
		{ID: -1 << 40, Customer: "", Total: 0},        // an empty string, more zero bytes
		{ID: 3, Customer: "c", Total: 1e300, Zero: 1}, // the double's bytes are not UTF-8
	}
	want := map[string]written{}
	for i, o := range orders {
		for _, table := range []string{"outbox_blob", "outbox_varbin"} {
			id := uuid.NewString()
			wire, _ := confluentAvro(t, uint32(100+i), o)
			want[id] = written{schemaID: uint32(100 + i), order: o, wire: wire}
			e.Exec("INSERT INTO "+table+" (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'order', ?, 'OrderAvro', ?)",
				id, "order-"+table, wire)
		}
	}
	r := harness.StartRouter(t, e.Args("avro", "--outbox-table", "shop.outbox_blob", "--outbox-table", "shop.outbox_varbin", "--validate-json=false")...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	got := c.Read(len(want), 60*time.Second)
	got = append(got, c.Quiet(300*time.Millisecond)...)
	require.Len(t, got, len(want))
	for id, rec := range recordsByID(t, got) {
		w, ok := want[id]
		require.True(t, ok, "unexpected event %s", id)
		assert.Equal(t, w.wire, rec.Value, "byte for byte")
		var o avroOrder
		schemaID, err := decodeConfluentAvro(t, rec.Value, &o)
		require.NoError(t, err)
		assert.Equal(t, w.schemaID, schemaID)
		assert.Equal(t, w.order, o)
	}
	assert.Equal(t, 0, r.Stop(20*time.Second))
}

package test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/cetest"
	"github.com/binlog-router/binlog-router/test/harness"
)

// ceRow is one outbox row of the CloudEvents test and what its event must
// carry.
type ceRow struct {
	table, id, aggID, typ string
	payload               []byte // nil: NULL
	schemaVersion         *int
	traceparent, headers  *string
	contentType           string            // "" for a NULL payload
	extensions            map[string]string // besides aggregatetype
}

// TestCloudEventsEnvelopes runs one router per CloudEvents mode over the
// same rows (JSON, text and binary payloads, a NULL one, 2-, 3- and 4-byte
// UTF-8, every optional column) and decodes every record with the
// CloudEvents Go SDK: its attributes, extensions and data equal the row.
// A replay of the same range with the same envelope publishes the same
// records.
func TestCloudEventsEnvelopes(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec("CREATE TABLE outbox_text LIKE outbox")
	e.Exec("ALTER TABLE outbox_text MODIFY payload MEDIUMTEXT CHARACTER SET utf8mb4 NULL")
	e.Exec("CREATE TABLE outbox_bin LIKE outbox")
	e.Exec("ALTER TABLE outbox_bin MODIFY payload LONGBLOB NULL")

	sv, tp, hdrs := 3, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", `{"tenant":"acmé-€-😀","retry":2}`
	avroBytes, _ := confluentAvro(t, 42, avroOrder{ID: 7, Customer: "Zoë € 😀", Total: 12.5})
	rows := []ceRow{
		{table: "outbox", aggID: "kundé-€-😀", typ: "OrderCreated",
			payload:       []byte(`{"name": "Zoë", "price": "12 €", "emoji": "😀", "n": [1.50, null]}`),
			schemaVersion: &sv, traceparent: &tp, headers: &hdrs, contentType: "application/json",
			extensions: map[string]string{"schemaversion": "3", "traceparent": tp, "tenant": "acmé-€-😀", "retry": "2"}},
		{table: "outbox", aggID: "order-2", typ: "OrderPaid", payload: []byte(`["ß", "€", "😀"]`), contentType: "application/json"},
		{table: "outbox", aggID: "order-3", typ: "OrderDeleted"}, // NULL payload
		{table: "outbox_text", aggID: "note-1", typ: "NoteWritten", payload: []byte("héllo € 😀 \"quoted\"\n\tnot JSON"),
			contentType: "text/plain; charset=utf-8"},
		{table: "outbox_bin", aggID: "order-7", typ: "OrderAvro", payload: avroBytes, contentType: "application/octet-stream"},
	}
	from := e.GTIDPos()
	for i := range rows {
		r := &rows[i]
		r.id = uuid.NewString()
		var payload any
		if r.payload != nil {
			payload = r.payload
		}
		e.Exec("INSERT INTO "+r.table+" (event_id, aggregate_type, aggregate_id, event_type, payload, schema_version, traceparent, headers) VALUES (?, 'order', ?, ?, ?, ?, ?, ?)",
			r.id, r.aggID, r.typ, payload, r.schemaVersion, r.traceparent, r.headers)
	}
	to := e.GTIDPos()
	created := createdAt(t, e, "outbox", "outbox_text", "outbox_bin")

	modes := []struct{ envelope, topic string }{{"cloudevents", "bin"}, {"cloudevents-structured", "str"}}
	tables := []string{"--outbox-table", "shop.outbox_text", "--outbox-table", "shop.outbox_bin", "--validate-json=false"}
	var routers []*harness.Router
	for _, m := range modes {
		args := append(e.Args("ce"+m.topic, tables...), "--envelope", m.envelope, "--topic-template", e.Prefix+"."+m.topic+".{event_type}")
		routers = append(routers, harness.StartRouter(t, args...))
	}
	for i, m := range modes {
		t.Run(m.envelope, func(t *testing.T) {
			c := harness.NewConsumer(t, e.Kafka.Brokers, `^`+e.Prefix+`\.`+m.topic+`\..*`)
			got := c.Read(len(rows), 60*time.Second)
			got = append(got, c.Quiet(300*time.Millisecond)...)
			require.Len(t, got, len(rows))
			byID := recordsByID(t, got)
			for _, r := range rows {
				rec := byID[r.id]
				require.NotNil(t, rec, "event %s missing", r.id)
				checkCloudEvent(t, m.envelope, r, created[r.id], rec)
			}
			require.Equal(t, 0, routers[i].Stop(20*time.Second))

			// Replay builds records with the same router code and flags.
			args := append(e.Args("ce"+m.topic, tables...), "--envelope", m.envelope, "--topic-template", e.Prefix+"."+m.topic+".{event_type}")
			res := harness.RunCLI(t, append(append([]string{"replay"}, args...), "--from-gtid", from, "--to-gtid", to, "--topic-prefix", "rp.")...)
			require.Equal(t, 0, res.Code, res.Stderr)
			rc := harness.NewConsumer(t, e.Kafka.Brokers, `^rp\.`+e.Prefix+`\.`+m.topic+`\..*`)
			replayed := rc.Read(len(rows), 60*time.Second)
			require.Len(t, replayed, len(rows))
			for _, rec := range replayed {
				id, _ := harness.Header(rec, "id")
				o := byID[id]
				require.NotNil(t, o, "replayed %s was never published", id)
				assert.Equal(t, o.Key, rec.Key)
				assert.Equal(t, o.Value, rec.Value, "same envelope on replay")
				assert.Equal(t, o.Headers, rec.Headers, "same headers on replay")
			}
		})
	}
}

// checkCloudEvent decodes rec with the SDK and compares it with row r.
func checkCloudEvent(t *testing.T, envelope string, r ceRow, created time.Time, rec *kgo.Record) {
	t.Helper()
	assert.Equal(t, r.aggID, string(rec.Key), "the key is still aggregate_id")
	if envelope == "cloudevents" {
		assert.Equal(t, r.payload, rec.Value, "binary mode: the value is the payload, byte for byte")
		assert.Equal(t, r.contentType, harness.RecordHeader(rec, "content-type"))
	} else {
		assert.Equal(t, "application/cloudevents+json", harness.RecordHeader(rec, "content-type"))
	}
	ev, err := cetest.ToEvent(context.Background(), rec)
	require.NoError(t, err, "the SDK decodes %s", r.id)
	require.NoError(t, ev.Validate())
	assert.Equal(t, "1.0", ev.SpecVersion())
	assert.Equal(t, r.id, ev.ID())
	assert.Equal(t, "/mysql/shop/"+r.table, ev.Source())
	assert.Equal(t, r.typ, ev.Type())
	assert.Equal(t, r.aggID, ev.Subject())
	assert.True(t, created.Equal(ev.Time()), "time %s, created_at %s", ev.Time(), created)
	assert.Equal(t, r.contentType, ev.DataContentType())
	switch {
	case r.payload == nil:
		assert.Empty(t, ev.Data())
	case r.contentType == "application/json":
		assert.JSONEq(t, string(r.payload), string(ev.Data()))
		if envelope == "cloudevents" {
			assert.Equal(t, r.payload, ev.Data())
		}
	default:
		assert.Equal(t, r.payload, ev.Data(), "data byte for byte")
	}
	want := map[string]any{"aggregatetype": "order"}
	for k, v := range r.extensions {
		want[k] = v
	}
	assert.Equal(t, want, ev.Extensions())
	if r.table == "outbox_bin" {
		var o avroOrder
		_, err := decodeConfluentAvro(t, ev.Data(), &o)
		require.NoError(t, err)
		assert.Equal(t, avroOrder{ID: 7, Customer: "Zoë € 😀", Total: 12.5}, o)
	}
}

// createdAt reads every row's created_at of tables as the server holds it,
// to the microsecond, by event_id.
func createdAt(t *testing.T, e *harness.Env, tables ...string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	for _, tbl := range tables {
		rows, err := e.DB.Query("SELECT event_id, UNIX_TIMESTAMP(created_at) FROM " + tbl)
		require.NoError(t, err)
		for rows.Next() {
			var id, ts string
			require.NoError(t, rows.Scan(&id, &ts))
			sec, frac, _ := strings.Cut(ts, ".")
			s, err := strconv.ParseInt(sec, 10, 64)
			require.NoError(t, err)
			us, err := strconv.ParseInt((frac + "000000")[:6], 10, 64)
			require.NoError(t, err)
			out[id] = time.Unix(s, us*1000)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	return out
}

// avroOrder is the record the Avro tests write; Zero ends the Avro body
// with a 0x00 byte (a long 0), which a BINARY(n) column would not keep.
type avroOrder struct {
	ID       int64   `avro:"id"`
	Customer string  `avro:"customer"`
	Total    float64 `avro:"total"`
	Zero     int64   `avro:"zero"`
}

const avroOrderSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
	{"name":"id","type":"long"},{"name":"customer","type":"string"},
	{"name":"total","type":"double"},{"name":"zero","type":"long"}]}`

// confluentAvro serializes v with hamba/avro in the Confluent wire format:
// magic byte 0, the 4-byte big-endian schema id, the Avro binary body. It
// returns the bytes and the body.
func confluentAvro(t testing.TB, schemaID uint32, v avroOrder) (wire, body []byte) {
	t.Helper()
	s, err := avro.Parse(avroOrderSchema)
	require.NoError(t, err)
	body, err = avro.Marshal(s, v)
	require.NoError(t, err)
	wire = binary.BigEndian.AppendUint32([]byte{0}, schemaID)
	return append(wire, body...), body
}

// decodeConfluentAvro checks the Confluent framing of b and decodes its
// body into v; it returns the schema id.
func decodeConfluentAvro(t testing.TB, b []byte, v *avroOrder) (uint32, error) {
	t.Helper()
	if len(b) < 5 || b[0] != 0 {
		return 0, fmt.Errorf("not in the Confluent wire format: % x", b)
	}
	s, err := avro.Parse(avroOrderSchema)
	require.NoError(t, err)
	return binary.BigEndian.Uint32(b[1:5]), avro.Unmarshal(s, b[5:], v)
}

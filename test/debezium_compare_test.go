package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/test/harness"
)

// dbzRow is one row of Debezium's outbox table.
type dbzRow struct {
	ID, AggType, AggID, Type string
	Payload                  *string // nil is SQL NULL
	// Expanded is the value Debezium writes with table.expand.json.payload
	// and the JsonConverter, when it is not the payload's JSON value.
	Expanded string
}

// expanded sets the value Debezium's JSON expansion writes for the row.
func (r dbzRow) expanded(v string) dbzRow {
	r.Expanded = v
	return r
}

// escaped is a payload kept as text by a failed JSON expansion: the
// JsonConverter writes it as a JSON string.
func escaped(payload string) string {
	b, _ := json.Marshal(payload)
	return string(b)
}

func dbzNewRow(aggType, aggID, typ string, payload *string) dbzRow {
	return dbzRow{ID: uuid.NewString(), AggType: aggType, AggID: aggID, Type: typ, Payload: payload}
}

func strPtr(s string) *string { return &s }

func insertRows(w *harness.DbzWorld, rows ...dbzRow) {
	w.T.Helper()
	tx, err := w.DB.Begin()
	require.NoError(w.T, err)
	for _, r := range rows {
		_, err := tx.Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (?, ?, ?, ?, ?)",
			r.ID, r.AggType, r.AggID, r.Type, r.Payload)
		require.NoError(w.T, err)
	}
	require.NoError(w.T, tx.Commit())
}

// comparisonRows writes the rows the comparison runs on, one statement group
// per case, and returns the rows each side must publish, in commit order.
func comparisonRows(w *harness.DbzWorld) []dbzRow {
	w.T.Helper()
	var want []dbzRow
	add := func(rows ...dbzRow) {
		insertRows(w, rows...)
		want = append(want, rows...)
	}
	// Several aggregate types in one transaction, JSON as applications
	// write it (spaces, a decimal with a trailing zero).
	order := dbzNewRow("order", "o-1", "OrderCreated", strPtr(`{"id": 1, "total": 12.50, "lines": [{"sku": "A-1", "qty": 2}]}`))
	add(order,
		dbzNewRow("customer", "c-1", "CustomerRegistered", strPtr(`{"name":"Ada","vip":true,"tags":[]}`)).
			expanded(`{"name":"Ada","vip":true}`), // an empty array is dropped
		dbzNewRow("payment", "p-1", "PaymentRequested", strPtr(`{"amount":1250,"currency":"EUR"}`)))
	// UTF-8 in the key and the payload (2-, 3- and 4-byte sequences).
	add(dbzNewRow("customer", "kunde-zürich-東京-😀", "CustomerRenamed", strPtr(`{"name":"Jürgen Müller 😀","city":"東京","note":"naïve café"}`)))
	// A NULL payload.
	deleted := dbzNewRow("order", "o-2", "OrderDeleted", nil).expanded("null") // the JSON null literal
	add(deleted)
	// A large payload (512 KiB).
	var big strings.Builder
	big.WriteString(`{"items":[`)
	for i := 0; big.Len() < 512<<10; i++ {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `{"n":%d,"text":"%s"}`, i, strings.Repeat("x", 40))
	}
	big.WriteString(`]}`)
	add(dbzNewRow("order", "o-1", "OrderLinesImported", strPtr(big.String())))
	// Other JSON shapes: an array, a string, numbers a JSON parser may
	// rewrite, an empty object, nested objects.
	add(dbzNewRow("payment", "p-1", "PaymentTags", strPtr(`["a", "b", 3]`)).expanded(escaped(`["a", "b", 3]`)),
		dbzNewRow("payment", "p-1", "PaymentNote", strPtr(`"just a string"`)).expanded(escaped(`"just a string"`)),
		dbzNewRow("payment", "p-2", "PaymentCaptured", strPtr(`{"amount":1.0e3,"cents":9007199254740993,"neg":-0.0}`)),
		dbzNewRow("customer", "c-1", "CustomerTouched", strPtr(`{}`)),
		dbzNewRow("order", "o-3", "OrderNested", strPtr(`{"a":{"b":{"c":[1,{"d":null}]}}}`)).
			expanded(escaped(`{"a":{"b":{"c":[1,{"d":null}]}}}`))) // an array of mixed types
	// An UPDATE and a DELETE of outbox rows: neither side publishes them.
	w.Exec("UPDATE outbox SET payload = ? WHERE id = ?", `{"id": 1, "total": 99.99}`, order.ID)
	w.Exec("DELETE FROM outbox WHERE id = ?", deleted.ID)
	// A rolled-back transaction never reaches the binlog.
	tx, err := w.DB.Begin()
	require.NoError(w.T, err)
	_, err = tx.Exec("INSERT INTO outbox (id, aggregatetype, aggregateid, type, payload) VALUES (?, 'order', 'o-9', 'OrderRolledBack', '{}')", uuid.NewString())
	require.NoError(w.T, err)
	require.NoError(w.T, tx.Rollback())
	// The same aggregate in consecutive transactions keeps its order.
	for i := range 5 {
		add(dbzNewRow("order", "o-4", "OrderStep", strPtr(fmt.Sprintf(`{"step":%d}`, i))))
	}
	return want
}

// sideRecords are the records one side published, by event id.
type sideRecords map[string]*kgo.Record

func byEventID(t testing.TB, recs []*kgo.Record) sideRecords {
	t.Helper()
	out := sideRecords{}
	for _, r := range recs {
		id, ok := harness.Header(r, "id")
		if !ok {
			t.Fatalf("record on %s/%d offset %d has no id header", r.Topic, r.Partition, r.Offset)
		}
		if _, dup := out[id]; dup {
			t.Fatalf("event %s published twice on one side", id)
		}
		out[id] = r
	}
	return out
}

func headerMap(r *kgo.Record) map[string]string {
	m := map[string]string{}
	for _, h := range r.Headers {
		m[h.Key] = string(h.Value)
	}
	return m
}

func headerKeys(r *kgo.Record) []string {
	var ks []string
	for _, h := range r.Headers {
		ks = append(ks, h.Key)
	}
	return ks
}

// jsonEqual reports whether a and b hold the same JSON value: the same
// structure, member order aside, and numbers of the same decimal value
// (12.50 and 12.5, 1.0e3 and 1000).
func jsonEqual(a, b []byte) bool {
	x, errX := canonicalJSON(a)
	y, errY := canonicalJSON(b)
	return errX == nil && errY == nil && x == y
}

// canonicalJSON prints v with sorted members, no space and every number as
// an exact fraction.
func canonicalJSON(v []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return "", err
	}
	var b strings.Builder
	writeCanonical(&b, x)
	return b.String(), nil
}

func writeCanonical(b *strings.Builder, x any) {
	switch v := x.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "%q:", k)
			writeCanonical(b, v[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case json.Number:
		r, ok := new(big.Rat).SetString(v.String())
		if !ok {
			b.WriteString(v.String())
			return
		}
		b.WriteString(r.RatString())
	default:
		out, _ := json.Marshal(v)
		b.Write(out)
	}
}

// partitionOrder lists the event ids of recs per topic and partition in
// offset order.
func partitionOrder(recs []*kgo.Record) map[string][]string {
	sorted := slices.Clone(recs)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Offset < sorted[j].Offset })
	out := map[string][]string{}
	for _, r := range sorted {
		id, _ := harness.Header(r, "id")
		k := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
		out[k] = append(out[k], id)
	}
	return out
}

// TestDebeziumRecordsMatch runs the same Debezium-layout outbox rows through
// Debezium's MariaDB connector with the Outbox Event Router (Kafka Connect
// in distributed mode, the configuration in examples/debezium) and through
// `binlog-router run --preset debezium`, and compares the records a
// read_committed consumer reads, record by record.
//
// With the configuration a migration keeps (StringConverter, no JSON
// expansion) topic, partition, key and value bytes and the id header are
// identical. The differences, each documented in the migration guide
// (docs/debezium-migration.md): the router adds the headers event_type,
// aggregate_type and binlog_gtid; the record timestamp is the transaction's commit time on the
// router and the time Debezium processed the event on Debezium. With JSON
// expansion (outbox-connector-json.json) Debezium rewrites the payload
// (compact, numbers re-printed, scalar payloads kept as escaped strings);
// the router's values are the stored bytes, the same JSON value. UPDATEs,
// DELETEs and rolled-back transactions publish nothing on either side, and
// a NULL payload is a record with a null value on both. A payload that is
// not JSON stops the router unless --validate-json=false, which publishes
// Debezium's bytes.
func TestDebeziumRecordsMatch(t *testing.T) {
	w := harness.NewDebeziumWorld(t, nil)
	w.CreateTopics("outbox.event.order", "outbox.event.customer", "outbox.event.payment",
		"json.outbox.event.order", "json.outbox.event.customer", "json.outbox.event.payment")
	start := w.GTIDPos()

	name, plain := w.ConnectorConfig("outbox-connector.json")
	w.StartConnector(name, plain)
	jsonName, expanded := w.ConnectorConfig("outbox-connector-json.json")
	expanded["transforms.outbox.route.topic.replacement"] = "json.outbox.event.${routedByValue}"
	w.StartConnector(jsonName, expanded)

	rows := comparisonRows(w)
	plainC := harness.NewConsumer(t, w.Kafka.Brokers, `^outbox\.event\..*`)
	dbzPlain := plainC.Read(len(rows), 3*time.Minute)
	jsonC := harness.NewConsumer(t, w.Kafka.Brokers, `^json\.outbox\.event\..*`)
	dbzJSON := jsonC.Read(len(rows), 3*time.Minute)
	require.Len(t, dbzPlain, len(rows), "debezium (StringConverter) records")
	require.Len(t, dbzJSON, len(rows), "debezium (JsonConverter, expanded) records")

	// A number beyond int64 in a payload: Debezium's JSON expansion fails
	// on it and the expanding connector's task stops; without expansion it
	// is text like any other.
	bigNumber := dbzNewRow("payment", "p-3", "PaymentSettled", strPtr(`{"ledger":12345678901234567890}`))
	insertRows(w, bigNumber)
	rows = append(rows, bigNumber)
	dbzPlain = append(dbzPlain, plainC.Read(1, 2*time.Minute)...)
	require.Len(t, dbzPlain, len(rows), "debezium (StringConverter) records")
	failure := w.WaitTaskFailed(jsonName)
	assert.Contains(t, failure, "Invalid type for STRUCT", "the expanding connector's task failure")
	end := w.GTIDPos()
	ids := map[string]dbzRow{}
	for _, r := range rows {
		ids[r.ID] = r
	}

	// The router starts where the connectors started and reads the same
	// transactions; the consumer goes on from where it stopped.
	r := harness.StartRouter(t, w.RouterArgs("dbzcompare", "--start", "gtid:"+start)...)
	routed := plainC.Read(len(rows), 2*time.Minute)
	w.WaitRouterCheckpoint("dbzcompare", end)
	routed = append(routed, plainC.Quiet(2*time.Second)...)
	require.Equal(t, 0, r.Stop(30*time.Second))
	require.Len(t, routed, len(rows), "router records")

	dbz, rt, dj := byEventID(t, dbzPlain), byEventID(t, routed), byEventID(t, dbzJSON)
	for id := range ids {
		require.Contains(t, dbz, id, "debezium published every row")
		require.Contains(t, rt, id, "the router published every row")
		if id != bigNumber.ID {
			require.Contains(t, dj, id, "debezium (json) published every row before the failure")
		}
	}
	logDiffs(t, ids, dbz, rt, dj)

	for id, row := range ids {
		d, g := dbz[id], rt[id]
		assert.Equal(t, d.Topic, g.Topic, "topic of %s", id)
		assert.Equal(t, "outbox.event."+row.AggType, g.Topic, "topic of %s", id)
		assert.Equal(t, d.Partition, g.Partition, "partition of %s", id)
		assert.Equal(t, d.Key, g.Key, "key of %s", id)
		assert.Equal(t, []byte(row.AggID), g.Key, "key of %s", id)
		assert.Equal(t, d.Value, g.Value, "value of %s", id)
		if row.Payload == nil {
			assert.Nil(t, d.Value, "debezium: a NULL payload is a null value")
			assert.Nil(t, g.Value, "router: a NULL payload is a null value")
		} else {
			assert.Equal(t, []byte(*row.Payload), g.Value, "router value of %s: the stored bytes", id)
		}
		// Debezium 3.2.1+ adds its context headers unless
		// extended.headers.enabled=false.
		dh := headerMap(d)
		assert.Equal(t, []string{"__debezium.context.connectorLogicalName", "__debezium.context.taskId",
			"__debezium.context.connectorName", "__debezium.context.runId", "id"}, headerKeys(d), "debezium headers of %s", id)
		assert.Equal(t, id, dh["id"], "debezium id header")
		assert.Equal(t, plain["topic.prefix"], dh["__debezium.context.connectorLogicalName"])
		assert.Equal(t, "mariadb", dh["__debezium.context.connectorName"])
		gh := headerMap(g)
		assert.Equal(t, []string{"id", "event_type", "aggregate_type", "binlog_gtid"}, headerKeys(g), "router headers of %s", id)
		assert.Equal(t, id, gh["id"])
		assert.Equal(t, row.Type, gh["event_type"])
		assert.Equal(t, row.AggType, gh["aggregate_type"])
		j, ok := dj[id]
		if !ok {
			continue
		}
		jh := headerMap(j)
		assert.Equal(t, map[string]string{"id": id, "event_type": row.Type, "aggregate_type": row.AggType}, jh,
			"debezium json headers of %s (table.fields.additional.placement, extended.headers.enabled=false)", id)
		assert.Equal(t, g.Topic, strings.TrimPrefix(j.Topic, "json."), "json topic of %s", id)
		assert.Equal(t, g.Partition, j.Partition, "json partition of %s", id)
		assert.Equal(t, g.Key, j.Key, "json key of %s", id)
		want := row.Expanded
		if want == "" {
			want = *row.Payload
		}
		assert.True(t, jsonEqual([]byte(want), j.Value), "expanded value of %s: want %.200s, debezium wrote %.200s", id, want, j.Value)
	}
	// Per partition, both sides publish in the same order.
	assert.Equal(t, partitionOrder(dbzPlain), partitionOrder(routed), "order within each partition")

	// UPDATE: both warn and publish nothing; DELETE: both drop it silently.
	assert.Contains(t, w.Connect.Log(), "Unexpected update message received", "debezium warns about the UPDATE")
	assert.Contains(t, r.Out.String(), "UPDATE of outbox rows ignored", "the router warns about the UPDATE")

	// A payload that is not JSON, once the table has no JSON check:
	// Debezium publishes the text; the router stops before it, naming the
	// row, unless --validate-json=false, and then publishes the same bytes.
	w.Exec("ALTER TABLE outbox MODIFY payload LONGTEXT NULL")
	from := w.GTIDPos()
	notJSON := dbzNewRow("order", "o-5", "OrderNoted", strPtr("<note>not JSON</note>"))
	insertRows(w, notJSON)
	d := plainC.Read(1, 2*time.Minute)
	require.Len(t, d, 1, "debezium publishes the row")
	stopped := harness.StartRouter(t, w.RouterArgs("dbznotjson", "--start", "gtid:"+from)...)
	assert.NotEqual(t, 0, stopped.Wait(time.Minute), "the router stops on a payload that is not JSON")
	assert.Contains(t, stopped.Out.String(), "is not valid JSON")
	assert.Contains(t, stopped.Out.String(), notJSON.ID)
	r2 := harness.StartRouter(t, w.RouterArgs("dbznotjson2", "--start", "gtid:"+from, "--validate-json=false")...)
	g := plainC.Read(1, 2*time.Minute)
	require.Equal(t, 0, r2.Stop(30*time.Second))
	require.Len(t, g, 1, "--validate-json=false publishes the row")
	assert.Equal(t, notJSON.ID, headerMap(g[0])["id"])
	assert.Equal(t, d[0].Topic, g[0].Topic)
	assert.Equal(t, d[0].Partition, g[0].Partition)
	assert.Equal(t, d[0].Key, g[0].Key)
	assert.Equal(t, d[0].Value, g[0].Value, "the same bytes")
	assert.Equal(t, []byte(*notJSON.Payload), g[0].Value)
}

// logDiffs logs, field by field, how many records differ between Debezium
// and the router: the comparison's result in figures.
func logDiffs(t *testing.T, rows map[string]dbzRow, dbz, rt, dj sideRecords) {
	var topic, part, key, value, id, extra, ts, jsonBytes, jsonValue int
	jsonCompared := 0
	for eid, row := range rows {
		d, g := dbz[eid], rt[eid]
		if d.Topic != g.Topic {
			topic++
		}
		if d.Partition != g.Partition {
			part++
		}
		if !bytes.Equal(d.Key, g.Key) {
			key++
		}
		if !bytes.Equal(d.Value, g.Value) || (d.Value == nil) != (g.Value == nil) {
			value++
		}
		if headerMap(d)["id"] != headerMap(g)["id"] {
			id++
		}
		if len(g.Headers) != len(d.Headers) {
			extra++
		}
		if !d.Timestamp.Equal(g.Timestamp) {
			ts++
		}
		j, ok := dj[eid]
		if !ok {
			continue
		}
		jsonCompared++
		if !bytes.Equal(j.Value, g.Value) {
			jsonBytes++
			if !jsonEqual(j.Value, g.Value) {
				jsonValue++
				t.Logf("expanded JSON is another value for %s (%s): router %.120q, debezium %.120q", eid, row.Type, g.Value, j.Value)
			} else {
				t.Logf("expanded JSON is the same value in other bytes for %s (%s): router %.120q, debezium %.120q", eid, row.Type, g.Value, j.Value)
			}
		}
	}
	t.Logf("compared %d records (StringConverter): topic differs %d, partition %d, key %d, value %d, id header %d, header set %d, timestamp %d",
		len(rows), topic, part, key, value, id, extra, ts)
	t.Logf("compared %d records (JsonConverter, table.expand.json.payload=true): value bytes differ %d, JSON value differs %d",
		jsonCompared, jsonBytes, jsonValue)
}

package test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestRoutesOutboxRowsEndToEnd checks the record contract: topics,
// partitions, keys, values, headers, timestamps and per-aggregate order,
// as a read_committed consumer sees them; rolled-back transactions and
// other tables never appear.
func TestRoutesOutboxRowsEndToEnd(t *testing.T) {
	e2eTest(t, harness.NewEnv(t, harness.EnvOpts{}))
}

func e2eTest(t *testing.T, e *harness.Env) {
	// Written before the router starts: --start earliest must find them.
	var want []harness.Event
	types := []string{"OrderCreated", "OrderPaid", "OrderShipped"}
	for i := 0; i < 30; i++ {
		ev := harness.NewEvent(fmt.Sprintf("order-%d", i%7), types[i%3], fmt.Sprintf(`{"n":%d,"note":"héllo 世界 🚀"}`, i))
		want = append(want, ev)
	}
	e.InsertTx(want[:10]...)
	for _, ev := range want[10:20] {
		e.InsertTx(ev)
	}
	r := harness.StartRouter(t, e.Args("e2e")...)
	// While running: more events, a rolled-back transaction, a tombstone,
	// optional columns.
	e.InsertTx(want[20:]...)
	tx, err := e.DB.Begin()
	require.NoError(t, err)
	require.NoError(t, harness.InsertEvent(tx, harness.NewEvent("order-rolled-back", "OrderCreated", `{}`)))
	require.NoError(t, tx.Rollback())

	sv, tp, hdrs := 3, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", `{"tenant":"acme","retry":2,"nested":{"a":1}}`
	tomb := harness.Event{ID: "0b5a1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", AggType: "order", AggID: "order-1", Type: "OrderDeleted",
		SchemaVersion: &sv, Traceparent: &tp, Headers: &hdrs}
	e.InsertTx(tomb)
	want = append(want, tomb)

	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	got := c.Read(len(want), 60*time.Second)
	got = append(got, c.Quiet(500*time.Millisecond)...)
	require.Len(t, got, len(want), "each outbox row exactly once; no rolled-back row")

	byID := map[string]*kgo.Record{}
	for _, rec := range got {
		id, ok := harness.Header(rec, "id")
		require.True(t, ok, "record without id header: %v", rec)
		byID[id] = rec
	}
	for _, ev := range want {
		rec := byID[ev.ID]
		require.NotNil(t, rec, "event %s missing", ev.ID)
		assert.Equal(t, e.Prefix+"."+ev.Type, rec.Topic)
		assert.Equal(t, ev.AggID, string(rec.Key))
		assert.Equal(t, int32(route.PartitionFor([]byte(ev.AggID), 3)), rec.Partition, "Java murmur2 partition of %q", ev.AggID)
		if ev.Payload == nil {
			assert.Nil(t, rec.Value, "NULL payload is a tombstone")
		} else {
			assert.Equal(t, *ev.Payload, string(rec.Value))
		}
		wantHeaders := []string{"id", ev.ID, "event_type", ev.Type, "aggregate_type", ev.AggType}
		if ev.SchemaVersion != nil {
			wantHeaders = append(wantHeaders, "schema_version", fmt.Sprint(*ev.SchemaVersion))
		}
		if ev.Traceparent != nil {
			wantHeaders = append(wantHeaders, "traceparent", *ev.Traceparent)
		}
		if ev.Headers != nil {
			wantHeaders = append(wantHeaders, "tenant", "acme", "retry", "2", "nested", `{"a":1}`)
		}
		var gotHeaders []string
		for _, h := range rec.Headers {
			if h.Key != "binlog_gtid" {
				gotHeaders = append(gotHeaders, h.Key, string(h.Value))
			}
		}
		assert.Equal(t, wantHeaders, gotHeaders, "headers of %s", ev.ID)
		g, ok := harness.Header(rec, "binlog_gtid")
		assert.True(t, ok)
		assert.Regexp(t, `^0-1-\d+$`, g)
		assert.WithinDuration(t, time.Now(), rec.Timestamp, time.Minute, "timestamp from created_at")
	}

	// Per-aggregate order: within one topic (and so one partition), an
	// aggregate's events arrive in commit order (the order they were
	// inserted).
	pos := map[string]int{}
	for i, ev := range want {
		pos[ev.ID] = i
	}
	last := map[string]int{}
	for _, rec := range got {
		id, _ := harness.Header(rec, "id")
		k := rec.Topic + "/" + string(rec.Key)
		if p, seen := last[k]; seen {
			assert.Less(t, p, pos[id], "aggregate %s out of order", k)
		}
		last[k] = pos[id]
	}
	assert.Equal(t, 0, r.Stop(20*time.Second), "SIGTERM exits 0")
	if n := crossCheckReaders(t, e); harness.OnApache() {
		assert.Equal(t, len(want), n, "the reference readers read every row once")
	}
}

// TestRestartResumesFromCheckpoint stops the router, writes more events,
// starts it again: every event exactly once.
func TestRestartResumesFromCheckpoint(t *testing.T) {
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		t.Run(delivery, func(t *testing.T) {
			e := harness.NewEnv(t, harness.EnvOpts{})
			r := harness.StartRouter(t, e.Args("restart", "--delivery", delivery)...)
			var ids []string
			write := func(n int) {
				for i := 0; i < n; i++ {
					ev := harness.NewEvent(fmt.Sprintf("agg-%d", i%5), "Thing", `{"i":1}`)
					ids = append(ids, ev.ID)
					e.InsertTx(ev)
				}
			}
			write(20)
			c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
			got := c.Read(20, 60*time.Second)
			require.Equal(t, 0, r.Stop(20*time.Second))
			write(15)
			r.Restart()
			got = append(got, c.Read(15, 60*time.Second)...)
			got = append(got, c.Quiet(time.Second)...)
			var gotIDs []string
			for _, rec := range got {
				id, _ := harness.Header(rec, "id")
				gotIDs = append(gotIDs, id)
			}
			sort.Strings(ids)
			sort.Strings(gotIDs)
			assert.Equal(t, ids, gotIDs, "nothing lost, nothing repeated")
			require.Equal(t, 0, r.Stop(20*time.Second))
		})
	}
}

package test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestBadRowsDeadLettered: with --on-invalid=dead-letter, every kind of
// bad row goes to the dead-letter topic with the original row, the error
// and the GTID; good rows around them are routed; nothing stops.
func TestBadRowsDeadLettered(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	dlq := e.Prefix + ".dlq"
	r := harness.StartRouter(t, e.Args("dlq", "--on-invalid", "dead-letter", "--dead-letter-topic", dlq, "--max-message-bytes", "200000")...)
	good1 := harness.NewEvent("g1", "Good", `{"ok":1}`)
	bad := map[string]harness.Event{
		"null_event_type":   {ID: "5b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", AggType: "order", AggID: "b1", Type: "", Payload: ptr(`{}`)},
		"null_aggregate_id": {ID: "6b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", AggType: "order", AggID: "", Type: "Bad", Payload: ptr(`{}`)},
		"invalid_event_id":  {ID: "not-a-uuid", AggType: "order", AggID: "b3", Type: "Bad", Payload: ptr(`{}`)},
		"invalid_topic":     {ID: "7b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", AggType: "order", AggID: "b4", Type: "Bad Type/x", Payload: ptr(`{}`)},
		"invalid_headers":   {ID: "8b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", AggType: "order", AggID: "b5", Type: "Bad", Payload: ptr(`{}`), Headers: ptr(`[1,2]`)},
		"record_too_large":  {ID: "9b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", AggType: "order", AggID: "b6", Type: "Bad", Payload: ptr(`"` + strings.Repeat("x", 300000) + `"`)},
	}
	e.InsertTx(good1)
	for _, ev := range bad {
		e.InsertTx(ev)
	}
	good2 := harness.NewEvent("g2", "Good", `{"ok":2}`)
	e.InsertTx(good2)

	c := harness.NewConsumer(t, e.Kafka.Brokers, "^"+e.Prefix+`\.Good$`)
	got := c.Read(2, 60*time.Second)
	assert.ElementsMatch(t, []string{good1.ID, good2.ID}, harness.RecordIDs(got))

	d := harness.NewConsumer(t, e.Kafka.Brokers, "^"+e.Prefix+`\.dlq$`)
	letters := d.Read(len(bad), 60*time.Second)
	require.Len(t, letters, len(bad))
	for _, rec := range letters {
		kind, _ := harness.Header(rec, "error_kind")
		want, ok := bad[kind]
		require.True(t, ok, "unexpected kind %q", kind)
		id, _ := harness.Header(rec, "id")
		assert.Equal(t, want.ID, id)
		g, _ := harness.Header(rec, "binlog_gtid")
		assert.Regexp(t, `^0-1-\d+$`, g)
		var v map[string]any
		require.NoError(t, json.Unmarshal(rec.Value, &v))
		assert.Equal(t, "shop.outbox", v["table"])
		assert.Equal(t, kind, v["kind"])
		assert.NotEmpty(t, v["error"])
		if kind != "record_too_large" {
			assert.Equal(t, *want.Payload, v["payload"])
		}
	}
	require.Equal(t, 0, r.Stop(20*time.Second))
}

// TestBadRowStopsByDefault: the default policy stops at the bad row with
// an error naming the table, GTID, event_id and the fix, and the
// checkpoint stays before it: nothing after it is published. Restarted
// with --on-invalid=dead-letter, every row goes through exactly once and
// the bad one lands in the dead-letter topic.
func TestBadRowStopsByDefault(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	good := harness.NewEvent("g1", "Good", `{}`)
	e.InsertTx(good)
	e.InsertTx(harness.Event{ID: "ab0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", AggType: "order", AggID: "", Type: "Bad", Payload: ptr(`{}`)})
	after := harness.NewEvent("g2", "Good", `{}`)
	e.InsertTx(after)
	r := harness.StartRouter(t, e.Args("stop")...)
	assert.Equal(t, 1, r.Wait(60*time.Second))
	log := r.Out.String()
	for _, s := range []string{"shop.outbox", "ab0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", "aggregate_id", "--on-invalid=dead-letter"} {
		assert.Contains(t, log, s)
	}
	assert.Regexp(t, `gtid=0-1-\d+`, log)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	// The good row before the bad one may have been committed in an
	// earlier Kafka transaction, or aborted with the bad one.
	seen := harness.RecordIDs(c.Quiet(time.Second))
	assert.NotContains(t, seen, after.ID, "nothing after the bad row is published")

	dlq := e.Prefix + ".dlq"
	r2 := harness.StartRouter(t, e.Args("stop", "--on-invalid", "dead-letter", "--dead-letter-topic", dlq)...)
	got := c.ReadIDsUntil(func(recs []string) bool { return len(seen)+len(recs) >= 3 }, 60*time.Second)
	got = append(seen, got...)
	got = append(got, harness.RecordIDs(c.Quiet(time.Second))...)
	assert.ElementsMatch(t, []string{good.ID, "ab0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", after.ID}, got, "each row once: two routed, one dead-lettered")
	require.Equal(t, 0, r2.Stop(20*time.Second))
}

func ptr(s string) *string { return &s }

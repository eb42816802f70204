package test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestRecordTimestampRefused: Apache Kafka refuses a record whose
// timestamp is more than message.timestamp.after.max.ms (1 h) ahead of
// its clock, with INVALID_TIMESTAMP for its whole batch (kfake takes any
// timestamp). A row whose created_at is two hours ahead, in one
// transaction with a good row of the same aggregate (one partition, one
// batch): by default the router stops naming that row, not its neighbour,
// and the setting, with the checkpoint before the transaction; with
// --on-invalid=dead-letter it diverts that row and delivers the others
// exactly once.
func TestRecordTimestampRefused(t *testing.T) {
	if !harness.OnApache() {
		t.Skipf("runs on the Apache Kafka pass (%s=apache): kfake takes any timestamp", harness.BrokerEnv)
	}
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "stamped"
	c := harness.NewConsumer(t, e.Kafka.Brokers, "^"+e.Prefix+`\.Stamped$`)
	first := harness.NewEvent("agg-1", "Stamped", `{"n":1}`)
	mate := harness.NewEvent("agg-2", "Stamped", `{"n":2}`)
	late := harness.NewEvent("agg-2", "Stamped", `{"n":3,"late":true}`)
	last := harness.NewEvent("agg-1", "Stamped", `{"n":4}`)

	t.Run("stops by default", func(t *testing.T) {
		r := harness.StartRouter(t, e.Args(name)...)
		e.InsertTx(first)
		c.Read(1, time.Minute)
		beforeBad := e.GTIDPos()
		e.WaitCheckpoint(name, beforeBad)
		tx, err := e.DB.Begin()
		require.NoError(t, err)
		require.NoError(t, harness.InsertEvent(tx, mate))
		_, err = tx.Exec("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload, created_at) VALUES (?, ?, ?, ?, ?, NOW(6) + INTERVAL 2 HOUR)",
			late.ID, late.AggType, late.AggID, late.Type, *late.Payload)
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		e.InsertTx(last)

		assert.Equal(t, 1, r.Wait(2*time.Minute))
		stop := r.LogLine("binlog-router stopped")
		t.Logf("router: %s", stop)
		assert.Contains(t, stop, "event_id="+late.ID)
		assert.NotContains(t, stop, mate.ID, "the neighbour in the refused batch is not blamed")
		for _, s := range []string{"gtid=0-1-", "shop.outbox", "message.timestamp.after.max.ms", "INVALID_TIMESTAMP", "--on-invalid=dead-letter", "ahead of now"} {
			assert.Contains(t, stop, s)
		}
		assert.Empty(t, harness.RecordIDs(c.Quiet(time.Second)), "nothing of the refused transaction or after it")
		assert.Equal(t, beforeBad, e.MustCheckpoint(name).GTIDSet, "the checkpoint stays before the refused row's transaction")
	})

	t.Run("dead-letter", func(t *testing.T) {
		dlq := e.Prefix + ".dead"
		r := harness.StartRouter(t, e.Args(name, "--on-invalid", "dead-letter", "--dead-letter-topic", dlq)...)
		got := c.Read(2, time.Minute)
		got = append(got, c.Quiet(time.Second)...)
		assert.ElementsMatch(t, []string{mate.ID, last.ID}, harness.RecordIDs(got), "the good rows once each")
		letters := harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(dlq)).Read(1, time.Minute)
		require.Len(t, letters, 1)
		id, _ := harness.Header(letters[0], "id")
		kind, _ := harness.Header(letters[0], "error_kind")
		assert.Equal(t, late.ID, id)
		assert.Equal(t, "invalid_timestamp", kind)
		var v map[string]any
		require.NoError(t, json.Unmarshal(letters[0].Value, &v))
		assert.Contains(t, v["error"], "message.timestamp.after.max.ms")
		assert.WithinDuration(t, time.Now(), letters[0].Timestamp, time.Minute, "the dead letter's own timestamp is the time it was diverted")
		e.WaitCheckpoint(name, e.GTIDPos())
		r.MustRun("after diverting the row")
		t.Logf("router: %s", r.LogLine("the brokers refused record timestamps"))
		require.Equal(t, 0, r.Stop(20*time.Second))
	})
}

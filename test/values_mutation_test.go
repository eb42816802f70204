package test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestOutboxUpdateAndDelete: DELETEs of outbox rows are ignored, UPDATEs
// are logged and skipped under --on-update=warn and stop the router under
// --on-update=fail, naming the table and the transaction.
func TestOutboxUpdateAndDelete(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	first := harness.NewEvent("a", "Mut", `{"v":1}`)
	e.InsertTx(first)
	e.Exec("DELETE FROM outbox WHERE event_id = ?", first.ID) // apps may clean up right away
	second := harness.NewEvent("a", "Mut", `{"v":2}`)
	e.InsertTx(second)
	e.Exec("UPDATE outbox SET payload = '{\"v\":3}' WHERE event_id = ?", second.ID)
	third := harness.NewEvent("a", "Mut", `{"v":4}`)
	e.InsertTx(third)

	r := harness.StartRouter(t, e.Args("mut")...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	got := c.Read(3, 60*time.Second)
	got = append(got, c.Quiet(time.Second)...)
	assert.Equal(t, []string{first.ID, second.ID, third.ID}, harness.RecordIDs(got), "inserts only, in order; the update is not an event")
	assert.Equal(t, `{"v":2}`, string(got[1].Value), "the value as inserted")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.WaitLog(ctx, "UPDATE of outbox rows ignored"))
	require.Equal(t, 0, r.Stop(20*time.Second))

	f := harness.StartRouter(t, e.Args("mut-fail", "--on-update", "fail", "--topic-template", e.Prefix+"fail.{event_type}")...)
	assert.Equal(t, 1, f.Wait(60*time.Second))
	assert.Contains(t, f.Out.String(), "shop.outbox")
	assert.Contains(t, f.Out.String(), "update of an outbox row")
	assert.Regexp(t, `transaction 0-1-\d+`, f.Out.String())
}

// TestDroppedColumnStops: a DDL that drops a mapped column stops the
// router at the first row written after it, naming the table, the
// column and the fix; the checkpoint stays before that row.
func TestDroppedColumnStops(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	r := harness.StartRouter(t, e.Args("drop")...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	before := harness.NewEvent("a", "Drop", `{}`)
	e.InsertTx(before)
	c.Read(1, 60*time.Second)
	e.Exec("ALTER TABLE outbox DROP COLUMN event_type")
	e.Exec("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, payload) VALUES (UUID(), 'order', 'a', '{}')")
	assert.Equal(t, 1, r.Wait(60*time.Second))
	log := r.Out.String()
	assert.Contains(t, log, "shop.outbox")
	assert.Contains(t, log, "event_type")
	assert.Contains(t, log, "--column-event-type")
	cp := e.MustCheckpoint("drop")
	assert.NotEqual(t, e.GTIDPos(), cp.GTIDSet, "the checkpoint does not pass the unmappable row")
}

// TestMissingTopicStops: a topic that does not exist while creation is
// off stops the router with an error naming the topic and the event; the
// checkpoint stays before it. Off on the router's side
// (--auto-create-topics=false, any broker), and, on the Apache Kafka pass,
// on the broker's side: a node with auto.create.topics.enable=false,
// which refuses the router that asks for the topic.
func TestMissingTopicStops(t *testing.T) {
	t.Run("--auto-create-topics=false", func(t *testing.T) {
		missingTopicStops(t, harness.NewEnv(t, harness.EnvOpts{}), "--auto-create-topics=false")
	})
	t.Run("auto.create.topics.enable=false", func(t *testing.T) {
		k := harness.PrivateApache(t, devenv.ApacheKafkaConfig{Props: map[string]string{"auto.create.topics.enable": "false"}})
		missingTopicStops(t, harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }}))
	})
}

func missingTopicStops(t *testing.T, e *harness.Env, flags ...string) {
	ev := harness.NewEvent("a", "NoSuchTopic", `{}`)
	e.InsertTx(ev)
	r := harness.StartRouter(t, e.Args("notopic", flags...)...)
	assert.Equal(t, 1, r.Wait(90*time.Second))
	log := r.Out.String()
	assert.Contains(t, log, e.Prefix+".NoSuchTopic")
	assert.Contains(t, log, ev.ID)
	assert.Contains(t, log, "does not exist")
	_, err := e.Checkpoint("notopic")
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing)
}

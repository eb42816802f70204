package test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestOutboxUpdateAndDelete: DELETEs of outbox rows are ignored, UPDATEs
// are logged and skipped under --on-update=warn and stop the router under
// --on-update=fail, naming the table and the transaction.
func TestOutboxUpdateAndDelete(t *testing.T) {
	e := newEnv(t, envOpts{})
	first := newEvent("a", "Mut", `{"v":1}`)
	e.insertTx(first)
	e.exec("DELETE FROM outbox WHERE event_id = ?", first.ID) // apps may clean up right away
	second := newEvent("a", "Mut", `{"v":2}`)
	e.insertTx(second)
	e.exec("UPDATE outbox SET payload = '{\"v\":3}' WHERE event_id = ?", second.ID)
	third := newEvent("a", "Mut", `{"v":4}`)
	e.insertTx(third)

	r := startRouter(t, e.args("mut")...)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	got := c.read(3, 60*time.Second)
	got = append(got, c.quiet(time.Second)...)
	assert.Equal(t, []string{first.ID, second.ID, third.ID}, recordIDs(got), "inserts only, in order; the update is not an event")
	assert.Equal(t, `{"v":2}`, string(got[1].Value), "the value as inserted")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.waitLog(ctx, "UPDATE of outbox rows ignored"))
	require.Equal(t, 0, r.stop(20*time.Second))

	f := startRouter(t, e.args("mut-fail", "--on-update", "fail", "--topic-template", e.prefix+"fail.{event_type}")...)
	assert.Equal(t, 1, f.wait(60*time.Second))
	assert.Contains(t, f.out.String(), "shop.outbox")
	assert.Contains(t, f.out.String(), "update of an outbox row")
	assert.Regexp(t, `transaction 0-1-\d+`, f.out.String())
}

// TestDroppedColumnStops: a DDL that drops a mapped column stops the
// router at the first row written after it, naming the table, the
// column and the fix; the checkpoint stays before that row.
func TestDroppedColumnStops(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := startRouter(t, e.args("drop")...)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	before := newEvent("a", "Drop", `{}`)
	e.insertTx(before)
	c.read(1, 60*time.Second)
	e.exec("ALTER TABLE outbox DROP COLUMN event_type")
	e.exec("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, payload) VALUES (UUID(), 'order', 'a', '{}')")
	assert.Equal(t, 1, r.wait(60*time.Second))
	log := r.out.String()
	assert.Contains(t, log, "shop.outbox")
	assert.Contains(t, log, "event_type")
	assert.Contains(t, log, "--column-event-type")
	cp := e.mustCheckpoint("drop")
	assert.NotEqual(t, e.gtidPos(), cp.GTIDSet, "the checkpoint does not pass the unmappable row")
}

// TestMissingTopicStops: a topic that does not exist while creation is
// off stops the router with an error naming the topic and the event; the
// checkpoint stays before it. Off on the router's side
// (--auto-create-topics=false, any broker), and, on the Apache Kafka pass,
// on the broker's side: a node with auto.create.topics.enable=false,
// which refuses the router that asks for the topic.
func TestMissingTopicStops(t *testing.T) {
	t.Run("--auto-create-topics=false", func(t *testing.T) {
		missingTopicStops(t, newEnv(t, envOpts{}), "--auto-create-topics=false")
	})
	t.Run("auto.create.topics.enable=false", func(t *testing.T) {
		k := privateApache(t, devenv.ApacheKafkaConfig{Props: map[string]string{"auto.create.topics.enable": "false"}})
		missingTopicStops(t, newEnv(t, envOpts{kafka: func(testing.TB) *devenv.Kafka { return k }}))
	})
}

func missingTopicStops(t *testing.T, e *env, flags ...string) {
	ev := newEvent("a", "NoSuchTopic", `{}`)
	e.insertTx(ev)
	r := startRouter(t, e.args("notopic", flags...)...)
	assert.Equal(t, 1, r.wait(90*time.Second))
	log := r.out.String()
	assert.Contains(t, log, e.prefix+".NoSuchTopic")
	assert.Contains(t, log, ev.ID)
	assert.Contains(t, log, "does not exist")
	_, err := e.checkpoint("notopic")
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing)
}

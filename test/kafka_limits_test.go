package test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// sizedTopicLimit is the max.message.bytes of the limit tests' topics:
// far below --max-message-bytes (1 MiB by default).
const sizedTopicLimit = 20000

// TestTopicLimitBatchesRows: 200 rows of about 650 bytes written in one
// transaction with one aggregate id (one partition: one batch if sized by
// --max-message-bytes alone, 130 kB) to a topic whose max.message.bytes is
// 20,000 all reach a read_committed consumer: the router sizes its batches
// to the topic's limit.
func TestTopicLimitBatchesRows(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	topic := e.Prefix + ".Sized"
	createTopic(t, e.Kafka.Brokers, topic, 3, map[string]string{"max.message.bytes": fmt.Sprint(sizedTopicLimit)})
	evs := paddedEvents("agg-1", "Sized", 200, 600)
	e.InsertTx(evs...)
	start := time.Now()
	r := harness.StartRouter(t, e.Args("limits")...)
	recs := harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(topic)).Read(len(evs), 90*time.Second)
	took := time.Since(start)
	assertSameIDs(t, evs, recs)
	require.Equal(t, 0, r.Stop(20*time.Second))
	assert.NotContains(t, r.Out.String(), "MESSAGE_TOO_LARGE")
	t.Logf("%s: %d rows of %d bytes through a topic limited to %d bytes in %s", harness.BrokerName(), len(recs), len(recs[0].Value), sizedTopicLimit, took.Round(time.Millisecond))
}

// TestTopicLimitRowTooLarge: a 60 kB row for a topic whose
// max.message.bytes is 20,000 stops the router by default (exit 1) with an
// error naming the row (table, GTID, event_id), the topic's limit and the
// fix; the checkpoint stays before it, so nothing after it is published.
// Restarted with --on-invalid=dead-letter, the row goes to the dead-letter
// topic whole and the rows around it are routed, each once.
func TestTopicLimitRowTooLarge(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	topic := e.Prefix + ".Sized"
	createTopic(t, e.Kafka.Brokers, topic, 3, map[string]string{"max.message.bytes": fmt.Sprint(sizedTopicLimit)})
	before := harness.NewEvent("a1", "Sized", `{"n":1}`)
	big := paddedEvents("a2", "Sized", 1, 60000)[0]
	after := harness.NewEvent("a3", "Sized", `{"n":3}`)
	for _, ev := range []harness.Event{before, big, after} {
		e.InsertTx(ev)
	}

	start := time.Now()
	r := harness.StartRouter(t, e.Args("toolarge")...)
	require.Equal(t, 1, r.Wait(60*time.Second))
	stopped := time.Since(start)
	log := r.Out.String()
	for _, s := range []string{"shop.outbox", "event_id=" + big.ID, "over topic " + topic + "'s max.message.bytes (20000 bytes)",
		"--add-config max.message.bytes=", "--on-invalid=dead-letter"} {
		assert.Contains(t, log, s)
	}
	assert.Regexp(t, `gtid=0-1-\d+`, log)
	assert.NotContains(t, log, "MESSAGE_TOO_LARGE", "refused by the router, not the broker")
	c := harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(topic))
	seen := harness.RecordIDs(c.Quiet(2 * time.Second))
	assert.NotContains(t, seen, after.ID, "nothing after the row is published")
	assert.NotContains(t, seen, big.ID)

	dlq := e.Prefix + ".dlq"
	r2 := harness.StartRouter(t, e.Args("toolarge", "--on-invalid", "dead-letter", "--dead-letter-topic", dlq)...)
	got := c.ReadIDsUntil(func(ids []string) bool { return len(seen)+len(ids) >= 2 }, 60*time.Second)
	got = append(seen, got...)
	got = append(got, harness.RecordIDs(c.Quiet(time.Second))...)
	assert.ElementsMatch(t, []string{before.ID, after.ID}, got, "the rows around it, each once")
	letters := harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(dlq)).Read(1, 60*time.Second)
	require.Len(t, letters, 1)
	l := decodeLetter(t, letters[0])
	assert.Equal(t, big.ID, l.EventID)
	assert.Equal(t, "record_too_large", l.Kind)
	assert.Contains(t, l.Error, "max.message.bytes")
	assert.False(t, l.Truncated, "the dead-letter topic takes the whole row")
	assert.Equal(t, *big.Payload, l.Payload)
	require.Equal(t, 0, r2.Stop(20*time.Second))
	t.Logf("%s: stopped at the %d-byte row in %s; dead-lettered on restart", harness.BrokerName(), len(*big.Payload), stopped.Round(time.Millisecond))
}

// TestBrokerLimitRowTooLarge: with the brokers' message.max.bytes at
// 20,000 (no topic override), 200 rows of 650 bytes go through, a 60 kB
// row is dead-lettered (truncated to fit the dead-letter topic, which has
// the same limit) and the error names the brokers' setting. Runs on kfake
// and, on the Apache pass, on a private Apache Kafka node configured so.
func TestBrokerLimitRowTooLarge(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	limit := fmt.Sprint(sizedTopicLimit)
	if harness.OnApache() {
		e.Kafka = harness.PrivateApache(t, devenv.ApacheKafkaConfig{Props: map[string]string{"message.max.bytes": limit}})
	} else {
		e.Kafka = startKfake(t, nil, kfake.BrokerConfigs(map[string]string{"message.max.bytes": limit}))
	}
	evs := paddedEvents("agg-1", "Sized", 200, 600)
	big := paddedEvents("a2", "Sized", 1, 60000)[0]
	e.InsertTx(evs[:100]...)
	e.InsertTx(big)
	e.InsertTx(evs[100:]...)
	dlq := e.Prefix + ".dlq"
	r := harness.StartRouter(t, e.Args("brokerlimit", "--on-invalid", "dead-letter", "--dead-letter-topic", dlq)...)
	recs := harness.NewConsumer(t, e.Kafka.Brokers, "^"+e.Prefix+`\.Sized$`).Read(len(evs), 90*time.Second)
	assertSameIDs(t, evs, recs)
	letters := harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(dlq)).Read(1, 60*time.Second)
	require.Len(t, letters, 1)
	l := decodeLetter(t, letters[0])
	assert.Equal(t, big.ID, l.EventID)
	assert.Contains(t, l.Error, "over the brokers' message.max.bytes (20000 bytes)")
	assert.True(t, l.Truncated, "truncated to fit the dead-letter topic's limit")
	assert.LessOrEqual(t, len(letters[0].Value), sizedTopicLimit)
	require.Equal(t, 0, r.Stop(20*time.Second))
	assert.NotContains(t, r.Out.String(), "MESSAGE_TOO_LARGE")
}

// TestValidateComparesLimits: validate warns when an outbox topic's
// max.message.bytes is below --max-message-bytes, names the topic and
// gives the command that raises it; at an equal limit it is OK.
func TestValidateComparesLimits(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	topic := e.Prefix + ".Sized"
	createTopic(t, e.Kafka.Brokers, topic, 1, map[string]string{"max.message.bytes": fmt.Sprint(sizedTopicLimit)})
	v := runValidate(t, nil, e.Args("vallimits")...)
	line := v.line("WARN", "message size")
	require.NotEmpty(t, line, "a message size warning")
	assert.Contains(t, line, "outbox topic "+topic+": max.message.bytes 20000")
	assert.Contains(t, fixOf(t, line), "--entity-name "+topic+" --add-config max.message.bytes=1048576")
	assert.Contains(t, fixOf(t, line), "lower --max-message-bytes to 20000")

	v = runValidate(t, nil, e.Args("vallimits", "--max-message-bytes", fmt.Sprint(sizedTopicLimit))...)
	assert.Contains(t, v.line("OK", "message size"), "--max-message-bytes 20000 fits")
}

// paddedEvents are n events of one aggregate whose payloads are JSON
// strings of about size random hex digits: they do not compress, so the
// brokers see them at their size.
func paddedEvents(aggID, typ string, n, size int) []harness.Event {
	out := make([]harness.Event, n)
	pad := make([]byte, (size+1)/2)
	for i := range out {
		_, _ = rand.Read(pad)
		out[i] = harness.NewEvent(aggID, typ, fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, hex.EncodeToString(pad)[:size]))
	}
	return out
}

func assertSameIDs(t *testing.T, evs []harness.Event, recs []*kgo.Record) {
	t.Helper()
	want := make([]string, len(evs))
	for i, ev := range evs {
		want[i] = ev.ID
	}
	assert.ElementsMatch(t, want, harness.RecordIDs(recs), "every row exactly once")
}

// letter is the part of a dead-letter record's value the tests read.
type letter struct {
	EventID   string `json:"event_id"`
	Kind      string `json:"kind"`
	Error     string `json:"error"`
	Payload   string `json:"payload"`
	Truncated bool   `json:"payload_truncated"`
}

func decodeLetter(t *testing.T, rec *kgo.Record) letter {
	t.Helper()
	var l letter
	require.NoError(t, json.Unmarshal(rec.Value, &l))
	return l
}

// createTopic creates topic with the given configs (replication factor 1:
// the tests' clusters have one broker).
func createTopic(t testing.TB, brokers []string, topic string, partitions int32, configs map[string]string) {
	t.Helper()
	adm := harness.NewAdmin(t, brokers)
	cfg := map[string]*string{}
	for k, v := range configs {
		cfg[k] = &v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, cfg, topic)
	require.NoError(t, err)
	require.NoError(t, resp.Err, "creating topic %s", topic)
}

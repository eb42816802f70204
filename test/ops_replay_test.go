package test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/replay"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestReplayMiddleRange replays the middle of three ranges to prefixed
// topics: a read_committed consumer gets exactly that range's rows, as the
// router published them (key, value, headers including id and
// binlog_gtid, partition, timestamp); the originals get nothing new and
// the router's checkpoint does not change. A dry run prints the same
// records as JSON and produces nothing.
func TestReplayMiddleRange(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("replay")
	r := harness.StartRouter(t, args...)

	before := writeEvents(e, "Before", 3)
	from := e.GTIDPos()
	sv, tp, hdrs := 7, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", `{"tenant":"acme","retry":2}`
	special := harness.Event{ID: "5b8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b", AggType: "order", AggID: "order-x", Type: "Middle",
		SchemaVersion: &sv, Traceparent: &tp, Headers: &hdrs} // NULL payload: a tombstone
	second := harness.NewEvent("order-y", "Middle", `{"two":"in one transaction"}`)
	middle := append(writeEvents(e, "Middle", 4), special.ID, second.ID)
	e.InsertTx(special, second)
	to := e.GTIDPos()
	after := writeEvents(e, "After", 2)

	orig := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	originals := orig.Read(len(before)+len(middle)+len(after), 60*time.Second)
	e.WaitCheckpoint("replay", e.GTIDPos())
	require.Equal(t, 0, r.Stop(20*time.Second))
	cpBefore := e.MustCheckpoint("replay")
	byID := recordsByID(t, originals)

	res := harness.RunCLI(t, append(append([]string{"replay"}, args...),
		"--from-gtid", from, "--to-gtid", to, "--topic-prefix", "rp.", "--commit-records", "2")...)
	require.Equal(t, 0, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, fmt.Sprintf("replay: %d records, 5 transactions in range", len(middle)), "summary line")

	replayed := harness.NewConsumer(t, e.Kafka.Brokers, `^rp\.`+e.Prefix+`\..*`)
	got := replayed.Read(len(middle), 60*time.Second)
	got = append(got, replayed.Quiet(500*time.Millisecond)...)
	assert.ElementsMatch(t, middle, harness.RecordIDs(got), "exactly the rows of the range, once each")
	for _, rec := range got {
		id, _ := harness.Header(rec, "id")
		o := byID[id]
		require.NotNil(t, o, "replayed %s was never published", id)
		assert.Equal(t, "rp."+o.Topic, rec.Topic)
		assert.Equal(t, o.Partition, rec.Partition, "same partitioner")
		assert.Equal(t, o.Key, rec.Key)
		assert.Equal(t, o.Value, rec.Value)
		assert.Equal(t, o.Headers, rec.Headers, "same headers, same order, same binlog_gtid")
		assert.True(t, o.Timestamp.Equal(rec.Timestamp), "timestamp %s, original %s", rec.Timestamp, o.Timestamp)
	}
	assert.Empty(t, orig.Quiet(500*time.Millisecond), "nothing new in the original topics")
	assert.Equal(t, cpBefore, e.MustCheckpoint("replay"), "the router's checkpoint is untouched")

	// Dry run to the prefix that now exists: partitions computed from the
	// topics' partition counts. To a new prefix: null, and no topic made.
	for _, prefix := range []string{"rp.", "dry."} {
		res := harness.RunCLI(t, append(append([]string{"replay"}, args...),
			"--from-gtid", from, "--to-gtid", to, "--topic-prefix", prefix, "--dry-run")...)
		require.Equal(t, 0, res.Code, res.Stderr)
		assert.Contains(t, res.Stderr, "dry run: nothing produced")
		lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
		require.Len(t, lines, len(middle), res.Stdout)
		var ids []string
		for _, text := range lines {
			var l replay.Line
			require.NoError(t, json.Unmarshal([]byte(text), &l), text)
			id := l.Headers[0].Value
			ids = append(ids, id)
			o := byID[id]
			require.NotNil(t, o, text)
			assert.Equal(t, prefix+o.Topic, l.Topic)
			if prefix == "rp." {
				require.NotNil(t, l.Partition, text)
				assert.Equal(t, int(o.Partition), *l.Partition)
			} else {
				assert.Nil(t, l.Partition, "topic does not exist: %s", text)
			}
			assert.Equal(t, string(o.Key), l.Key)
			if o.Value == nil {
				assert.Nil(t, l.Value, text)
			} else {
				require.NotNil(t, l.Value, text)
				assert.Equal(t, string(o.Value), *l.Value)
			}
			require.Len(t, l.Headers, len(o.Headers))
			for i, h := range o.Headers {
				assert.Equal(t, replay.Header{Key: h.Key, Value: string(h.Value)}, l.Headers[i])
			}
			assert.True(t, o.Timestamp.Equal(l.Timestamp), text)
		}
		assert.Equal(t, middle, ids, "binlog order")
	}
	assert.Empty(t, replayed.Quiet(500*time.Millisecond), "a dry run produces nothing")
	adm := e.Admin()
	topics, err := adm.ListTopics(context.Background())
	require.NoError(t, err)
	for _, name := range topics.Names() {
		assert.False(t, strings.HasPrefix(name, "dry."), "dry run created topic %s", name)
	}
}

// TestReplayTimeRange: --to-time ends at the first transaction committed
// after it, --from-time starts at the first committed at or after it
// (reading from the oldest binlog). Commit times come from SET timestamp,
// less than an hour ahead: Apache Kafka refuses record timestamps more
// than message.timestamp.after.max.ms (1 h) ahead of its clock, and the
// binlog must be in time order from its first transaction (the table's
// DDL, at the real time) on.
func TestReplayTimeRange(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("replaytime")
	now := time.Now().Truncate(time.Second)
	early := writeEvents(e, "Early", 2)
	from := e.GTIDPos()
	later := writeEventsAt(e, now.Add(20*time.Minute), "Later", 3)
	latest := writeEventsAt(e, now.Add(40*time.Minute), "Latest", 2)

	check := func(what, prefix string, want []string, flags ...string) {
		t.Helper()
		res := harness.RunCLI(t, append(append(append([]string{"replay"}, args...), "--topic-prefix", prefix), flags...)...)
		require.Equal(t, 0, res.Code, res.Stderr)
		c := harness.NewConsumer(t, e.Kafka.Brokers, "^"+strings.ReplaceAll(prefix, ".", `\.`)+".*")
		got := c.Read(len(want), 30*time.Second)
		got = append(got, c.Quiet(300*time.Millisecond)...)
		assert.ElementsMatch(t, want, harness.RecordIDs(got), what)
	}
	cut := now.Add(30 * time.Minute).UTC().Format(time.RFC3339)
	check("--to-time", "tt.", later, "--from-gtid", from, "--to-time", cut)
	check("--from-time reads from the oldest binlog", "ft.", latest, "--from-time", cut)
	all := append(append(early, later...), latest...)
	check("the whole binlog up to the executed set at start", "all.", all, "--from-gtid", "")

	res := harness.RunCLI(t, append(append([]string{"replay"}, args...), "--from-gtid", from, "--to-gtid", "0-1-999999")...)
	assert.Equal(t, 1, res.Code)
	assert.Contains(t, res.Stderr, "beyond what the server has executed")
	assert.Contains(t, res.Stderr, "0-1-999999")
	res = harness.RunCLI(t, append([]string{"replay"}, args...)...)
	assert.Equal(t, 2, res.Code, "no start: usage error")
	assert.Contains(t, res.Stderr, "--from-gtid")
}

// writeEvents commits n transactions of one event of type typ and returns
// their event ids.
func writeEvents(e *harness.Env, typ string, n int) []string {
	e.T.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		ev := harness.NewEvent(fmt.Sprintf("agg-%d", i%3), typ, fmt.Sprintf(`{"i":%d}`, i))
		e.InsertTx(ev)
		ids = append(ids, ev.ID)
	}
	return ids
}

// writeEventsAt is writeEvents with the session clock set to at, which
// becomes the commit time in the binlog.
func writeEventsAt(e *harness.Env, at time.Time, typ string, n int) []string {
	e.T.Helper()
	ctx := context.Background()
	conn, err := e.DB.Conn(ctx)
	require.NoError(e.T, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SET timestamp = ?", at.Unix())
	require.NoError(e.T, err)
	var ids []string
	for i := 0; i < n; i++ {
		ev := harness.NewEvent(fmt.Sprintf("agg-%d", i%3), typ, fmt.Sprintf(`{"i":%d}`, i))
		tx, err := conn.BeginTx(ctx, nil)
		require.NoError(e.T, err)
		require.NoError(e.T, harness.InsertEvent(tx, ev))
		require.NoError(e.T, tx.Commit())
		ids = append(ids, ev.ID)
	}
	return ids
}

func recordsByID(t testing.TB, recs []*kgo.Record) map[string]*kgo.Record {
	t.Helper()
	m := map[string]*kgo.Record{}
	for _, r := range recs {
		id, ok := harness.Header(r, "id")
		require.True(t, ok, "record without id: %v", r)
		require.Nil(t, m[id], "event %s published twice", id)
		m[id] = r
	}
	return m
}

// TestReplayDeadLetters: a row of the range that cannot be routed stops a
// replay by default, naming the row, and with --on-invalid dead-letter
// goes to the dead-letter topic while the other rows are replayed.
func TestReplayDeadLetters(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("rpdlq")
	from := e.GTIDPos()
	good1 := harness.NewEvent("g1", "Good", `{"ok":1}`)
	bad := harness.Event{ID: "6b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5c", AggType: "order", AggID: "", Type: "Bad", Payload: ptr(`{}`)}
	good2 := harness.NewEvent("g2", "Good", `{"ok":2}`)
	e.InsertTx(good1)
	e.InsertTx(bad)
	e.InsertTx(good2)
	to := e.GTIDPos()
	rng := []string{"--from-gtid", from, "--to-gtid", to, "--topic-prefix", "rp."}

	res := harness.RunCLI(t, append(append(append([]string{"replay"}, args...), rng...), "--transactional-id", "rpdlq-fail")...)
	require.NotEqual(t, 0, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, bad.ID, "the error names the row")
	assert.Contains(t, res.Stderr, "--on-invalid", "the error names the fix")

	dlq := e.Prefix + ".dlq"
	res = harness.RunCLI(t, append(append(append([]string{"replay"}, args...), rng...),
		"--transactional-id", "rpdlq-letters", "--on-invalid", "dead-letter", "--dead-letter-topic", dlq)...)
	require.Equal(t, 0, res.Code, res.Stderr)
	replayed := harness.NewConsumer(t, e.Kafka.Brokers, `^rp\.`+e.Prefix+`\.Good$`)
	got := replayed.Read(2, 60*time.Second)
	got = append(got, replayed.Quiet(500*time.Millisecond)...)
	assert.ElementsMatch(t, []string{good1.ID, good2.ID}, harness.RecordIDs(got), "the good rows, once each")
	d := harness.NewConsumer(t, e.Kafka.Brokers, "^"+regexp.QuoteMeta(dlq)+"$")
	letters := d.Read(1, 60*time.Second)
	letters = append(letters, d.Quiet(500*time.Millisecond)...)
	require.Len(t, letters, 1)
	kind, _ := harness.Header(letters[0], "error_kind")
	id, _ := harness.Header(letters[0], "id")
	assert.Equal(t, "null_aggregate_id", kind)
	assert.Equal(t, bad.ID, id)
}

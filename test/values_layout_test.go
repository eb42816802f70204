package test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// behindChanges run while the router is down, each followed by one event:
// a column added FIRST with ALGORITHM=INSTANT, mapped columns reordered,
// a column added AFTER, several changes in one statement (drop, rename,
// retype), a retype.
var behindChanges = []string{
	"ALTER TABLE outbox ADD COLUMN tenant VARCHAR(32) NULL FIRST, ALGORITHM=INSTANT",
	"ALTER TABLE outbox MODIFY aggregate_id VARCHAR(255) NOT NULL AFTER tenant, MODIFY event_type VARCHAR(255) NOT NULL FIRST",
	"ALTER TABLE outbox ADD COLUMN note TEXT NULL AFTER event_id",
	"ALTER TABLE outbox DROP COLUMN tenant, CHANGE note remark VARCHAR(40) NULL AFTER payload, RENAME COLUMN id TO seq",
	"ALTER TABLE outbox CHANGE aggregate_type aggregate_type VARCHAR(100) NOT NULL FIRST",
}

// TestLayoutChangesWhileBehind: the router is down while the outbox
// table is altered again and again, then catches up. With FULL metadata
// the rows carry their column names; with MINIMAL the checkpoint carries
// the layout in force at its position and the router applies each DDL
// statement to it. Either way every record is exactly right.
func TestLayoutChangesWhileBehind(t *testing.T) {
	for _, meta := range []string{"FULL", "MINIMAL"} {
		t.Run(meta, func(t *testing.T) {
			e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=" + meta}}})
			r := harness.StartRouter(t, e.Args("behind")...)
			c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
			e.InsertTx(harness.NewEvent("a0", "First", `{"v":0}`))
			c.Read(1, 60*time.Second)
			require.Equal(t, 0, r.Stop(20*time.Second))
			cp := e.MustCheckpoint("behind")
			if meta == "MINIMAL" {
				require.Len(t, cp.Layouts["shop.outbox"].Columns, 10, "the checkpoint stores the outbox layout")
				assert.Equal(t, "utf8mb4", cp.Layouts["shop.outbox"].Columns[1].Charset, "with its character sets")
			}

			evs := alterWhileDown(e)
			r = harness.StartRouter(t, e.Args("behind")...)
			got := c.Read(len(evs), 60*time.Second)
			requireExactly(t, e, evs, got)
			assert.Empty(t, c.Quiet(time.Second), "no duplicate")
			require.Equal(t, 0, r.Stop(20*time.Second))
			t.Logf("%s: %d layout changes while down, %d records, each exactly right", meta, len(behindChanges), len(got))
		})
	}
}

// TestLayoutUnknownStops: MINIMAL metadata and no stored layout (a first
// start from a position before the changes). The layout of the rows
// before the changes is known nowhere: the router stops before the first
// of them, naming binlog_row_metadata=FULL, and nothing is committed.
func TestLayoutUnknownStops(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=MINIMAL"}}})
	from := e.GTIDPos()
	alterWhileDown(e)
	r := harness.StartRouter(t, e.Args("unknown", "--start", "gtid:"+from)...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	code := r.Wait(60 * time.Second)
	require.Equal(t, 1, code, "a row the router stops before (its layout was lost to DDL, not to a server setting)")
	assert.Contains(t, r.Out.String(), "binlog_row_metadata=FULL")
	assert.Contains(t, r.Out.String(), "the table's column layout when this row was written is not known")
	assert.Empty(t, c.Quiet(2*time.Second), "nothing after the stop is committed")
	assert.Equal(t, "", e.CheckpointSet("unknown"), "no checkpoint was stored")
	t.Logf("exit %d, 0 records, no checkpoint; stop: %s", code, stopLine(r.Out.String()))
}

// alterWhileDown writes one event, then each of behindChanges followed by
// one event, and returns the events.
func alterWhileDown(e *harness.Env) []harness.Event {
	ev := harness.NewEvent("a1", "Before", `{"v":1}`)
	e.InsertTx(ev)
	evs := []harness.Event{ev}
	for i, q := range behindChanges {
		e.Exec(q)
		ev := harness.NewEvent("a"+string(rune('2'+i)), "After", `{"v":2}`)
		e.InsertTx(ev)
		evs = append(evs, ev)
	}
	return evs
}

// requireExactly checks that got are the records of evs, each once, with
// their topic, key, value and headers.
func requireExactly(t *testing.T, e *harness.Env, evs []harness.Event, got []*kgo.Record) {
	t.Helper()
	require.Len(t, got, len(evs))
	byID := map[string]harness.Event{}
	for _, ev := range evs {
		byID[ev.ID] = ev
	}
	for _, rec := range got {
		id, _ := harness.Header(rec, "id")
		ev, ok := byID[id]
		require.True(t, ok, "record with unknown or repeated id %q", id)
		delete(byID, id)
		assert.Equal(t, e.Prefix+"."+ev.Type, rec.Topic, "event %s", id)
		assert.Equal(t, ev.AggID, string(rec.Key), "event %s", id)
		assert.Equal(t, *ev.Payload, string(rec.Value), "event %s", id)
		typ, _ := harness.Header(rec, "aggregate_type")
		assert.Equal(t, "order", typ, "event %s", id)
		et, _ := harness.Header(rec, "event_type")
		assert.Equal(t, ev.Type, et, "event %s", id)
	}
}

// stopLine is the log line that names binlog_row_metadata=FULL.
func stopLine(log string) string { return harness.LineWith(log, "binlog_row_metadata=FULL") }

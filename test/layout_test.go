package test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
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
// every record is exactly right. With MINIMAL metadata the layout of the
// rows written before the changes is known nowhere: the router stops
// before the first of them, naming binlog_row_metadata=FULL, and nothing
// after it is committed.
func TestLayoutChangesWhileBehind(t *testing.T) {
	for _, meta := range []string{"FULL", "MINIMAL"} {
		t.Run(meta, func(t *testing.T) {
			e := newEnv(t, envOpts{maria: devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=" + meta}}})
			r := startRouter(t, e.args("behind")...)
			c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
			e.insertTx(newEvent("a0", "First", `{"v":0}`))
			c.read(1, 60*time.Second)
			require.Equal(t, 0, r.stop(20*time.Second))
			stored := loadCheckpoint(t, e, "behind")

			var evs []event
			ev := newEvent("a1", "Before", `{"v":1}`)
			e.insertTx(ev)
			evs = append(evs, ev)
			for i, q := range behindChanges {
				e.exec(q)
				ev := newEvent("a"+string(rune('2'+i)), "After", `{"v":2}`)
				e.insertTx(ev)
				evs = append(evs, ev)
			}

			r = startRouter(t, e.args("behind")...)
			if meta == "FULL" {
				got := c.read(len(evs), 60*time.Second)
				require.Len(t, got, len(evs))
				byID := map[string]event{}
				for _, ev := range evs {
					byID[ev.ID] = ev
				}
				for _, rec := range got {
					id, _ := header(rec, "id")
					ev, ok := byID[id]
					require.True(t, ok, "record with unknown or repeated id %q", id)
					delete(byID, id)
					assert.Equal(t, e.prefix+"."+ev.Type, rec.Topic, "event %s", id)
					assert.Equal(t, ev.AggID, string(rec.Key), "event %s", id)
					assert.Equal(t, *ev.Payload, string(rec.Value), "event %s", id)
					typ, _ := header(rec, "aggregate_type")
					assert.Equal(t, "order", typ, "event %s", id)
				}
				require.Equal(t, 0, r.stop(20*time.Second))
				t.Logf("FULL: %d layout changes, %d records, each exactly right", len(behindChanges), len(got))
				return
			}
			code := r.wait(60 * time.Second)
			require.NotEqual(t, 0, code)
			assert.Contains(t, r.out.String(), "binlog_row_metadata=FULL")
			assert.Contains(t, r.out.String(), "the table's column layout when this row was written is not known")
			assert.Empty(t, c.quiet(2*time.Second), "nothing after the stop is committed")
			assert.Equal(t, stored, loadCheckpoint(t, e, "behind"), "the checkpoint did not move")
			t.Logf("MINIMAL: exit %d, 0 records, checkpoint still %s; stop: %s", code, stored, stopLine(r.out.String()))
		})
	}
}

// stopLine is the log line that names binlog_row_metadata=FULL.
func stopLine(log string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "binlog_row_metadata=FULL") {
			return l
		}
	}
	return ""
}

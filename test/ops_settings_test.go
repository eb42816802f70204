package test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestSettingsChangedAtRuntime: binlog_row_image and binlog_format changed
// with SET GLOBAL while the router runs. The next outbox row written by a
// new session has no full row image: the router stops before it, naming
// the setting, with exit code 2 (a server setting is configuration), and
// the checkpoint stays at the last row it published.
func TestSettingsChangedAtRuntime(t *testing.T) {
	for _, tt := range []struct{ set, reset, want string }{
		{"SET GLOBAL binlog_row_image=MINIMAL", "SET GLOBAL binlog_row_image=FULL", "binlog_row_image=FULL"},
		{"SET GLOBAL binlog_format=STATEMENT", "SET GLOBAL binlog_format=ROW", "binlog_format=ROW"},
	} {
		t.Run(tt.set, func(t *testing.T) {
			e := harness.NewEnv(t, harness.EnvOpts{})
			r := harness.StartRouter(t, e.Args("settings")...)
			c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
			e.InsertTx(harness.NewEvent("a0", "Before", `{"v":0}`))
			c.Read(1, 60*time.Second)
			harness.Eventually(t, 30*time.Second, "checkpoint stored", func() bool { return e.CheckpointSet("settings") != "" })
			stored := e.CheckpointSet("settings")

			e.Exec(tt.set)
			t.Cleanup(func() { _, _ = e.DB.Exec(tt.reset) })
			// A new session takes the new global value; the pool's
			// sessions keep theirs.
			fresh, err := e.Maria.DB(e.DBName)
			require.NoError(t, err)
			defer fresh.Close()
			_, err = fresh.ExecContext(context.Background(), "INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type) VALUES (UUID(), 'order', 'a1', 'After')")
			require.NoError(t, err)

			code := r.Wait(60 * time.Second)
			assert.Equal(t, 2, code, "a server setting is configuration")
			assert.Contains(t, r.Out.String(), tt.want)
			assert.Empty(t, c.Quiet(2*time.Second), "nothing after the stop is committed")
			assert.Equal(t, stored, e.CheckpointSet("settings"), "the checkpoint did not move")
			t.Logf("exit %d, 1 record before, 0 after; stop: %s", code, r.LogLine(tt.want))
		})
	}
}

// TestRowMetadataChangedAtRuntime: binlog_row_metadata switched from FULL
// to MINIMAL while the router runs; the rows written after it carry no
// column names. FLUSH TABLES gives the table a new table id, so that the
// layout the router saw under the old id (with names) cannot serve.
//
//   - tracked: the router started before the CREATE TABLE of the outbox
//     table in the binlog, so it knows the layout from that statement: it
//     routes the rows after the switch, each exactly once, without a stop.
//   - unknown: the router started after it, with FULL, and tracked no
//     layout: it stops before the first row without column names (exit 2,
//     a server setting changed at runtime), naming binlog_row_metadata=FULL
//     and the restart that recovers, and commits nothing after it.
//     Restarted while the setting is still MINIMAL, it reads the layout
//     from information_schema (the table did not change since the
//     checkpoint) and routes that row and the rows after it exactly once;
//     its checkpoint then carries the layout.
func TestRowMetadataChangedAtRuntime(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start string
		stops bool
	}{{"tracked", "earliest", false}, {"unknown", "latest", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := harness.NewEnv(t, harness.EnvOpts{})
			const name = "metadata"
			r := harness.StartRouter(t, e.Args(name, "--start", tc.start)...)
			require.NoError(t, r.WaitLog(ctxTimeout(t, 30*time.Second), "no checkpoint stored"))
			c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
			before := harness.NewEvent("m0", "Before", `{"v":0}`)
			e.InsertTx(before)
			got := c.Read(1, 60*time.Second)
			e.WaitCheckpoint(name, e.GTIDPos())
			stored := e.MustCheckpoint(name)
			if tc.stops {
				assert.Empty(t, stored.Layouts, "started after the CREATE TABLE with FULL metadata: no layout tracked")
			} else {
				assert.NotEmpty(t, stored.Layouts["shop.outbox"], "the layout followed from the CREATE TABLE")
			}

			e.Exec("SET GLOBAL binlog_row_metadata=MINIMAL")
			t.Cleanup(func() { _, _ = e.DB.Exec("SET GLOBAL binlog_row_metadata=FULL") })
			e.Exec("FLUSH TABLES shop.outbox")
			// A new session takes the new global value; the pool's
			// sessions keep theirs.
			fresh, err := e.Maria.DB(e.DBName)
			require.NoError(t, err)
			defer fresh.Close()
			after := []harness.Event{harness.NewEvent("m1", "After", `{"v":1}`), harness.NewEvent("m2", "After", `{"v":2}`)}
			require.NoError(t, harness.InsertEvent(fresh, after[0]))

			code, line := 0, ""
			if tc.stops {
				code = r.Wait(60 * time.Second)
				line = r.LogLine("binlog_row_metadata=FULL")
				assert.Equal(t, 2, code, "a server setting changed at runtime is configuration")
				assert.Contains(t, line, "outbox table shop.outbox")
				assert.Contains(t, line, "the setting changed at runtime")
				assert.Contains(t, line, "restart the router")
				assert.Empty(t, c.Quiet(2*time.Second), "nothing after the stop is committed")
				assert.Equal(t, stored.GTIDSet, e.CheckpointSet(name), "the checkpoint did not pass the row")
				// Restarted with MINIMAL still in force: the layout is
				// tracked from the checkpoint on.
				r = harness.StartRouter(t, e.Args(name)...)
			}
			require.NoError(t, harness.InsertEvent(fresh, after[1]))
			got = append(got, c.Read(len(after), 60*time.Second)...)
			got = append(got, c.Quiet(time.Second)...)
			requireExactly(t, e, append([]harness.Event{before}, after...), got)
			e.WaitCheckpoint(name, e.GTIDPos())
			assert.NotEmpty(t, e.MustCheckpoint(name).Layouts["shop.outbox"], "the checkpoint carries the tracked layout")
			require.Equal(t, 0, r.Stop(30*time.Second))
			t.Logf("%s: exit %d at the first row without column names (0: no stop); consumer read %d records, each once; stop: %s",
				tc.name, code, len(got), line)
		})
	}
}

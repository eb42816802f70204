package test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSettingsChangedAtRuntime: binlog_row_image and binlog_format changed
// with SET GLOBAL while the router runs. The next outbox row written by a
// new session has no full row image: the router stops before it, naming
// the setting, and the checkpoint stays at the last row it published.
func TestSettingsChangedAtRuntime(t *testing.T) {
	for _, tt := range []struct{ set, reset, want string }{
		{"SET GLOBAL binlog_row_image=MINIMAL", "SET GLOBAL binlog_row_image=FULL", "binlog_row_image=FULL"},
		{"SET GLOBAL binlog_format=STATEMENT", "SET GLOBAL binlog_format=ROW", "binlog_format=ROW"},
	} {
		t.Run(tt.set, func(t *testing.T) {
			e := newEnv(t, envOpts{})
			r := startRouter(t, e.args("settings")...)
			c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
			e.insertTx(newEvent("a0", "Before", `{"v":0}`))
			c.read(1, 60*time.Second)
			eventually(t, 30*time.Second, "checkpoint stored", func() bool { return loadCheckpoint(t, e, "settings") != "" })
			stored := loadCheckpoint(t, e, "settings")

			e.exec(tt.set)
			t.Cleanup(func() { _, _ = e.db.Exec(tt.reset) })
			// A new session takes the new global value; the pool's
			// sessions keep theirs.
			fresh, err := e.maria.DB(e.dbName)
			require.NoError(t, err)
			defer fresh.Close()
			_, err = fresh.ExecContext(context.Background(), "INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type) VALUES (UUID(), 'order', 'a1', 'After')")
			require.NoError(t, err)

			code := r.wait(60 * time.Second)
			require.NotEqual(t, 0, code)
			assert.Contains(t, r.out.String(), tt.want)
			assert.Empty(t, c.quiet(2*time.Second), "nothing after the stop is committed")
			assert.Equal(t, stored, loadCheckpoint(t, e, "settings"), "the checkpoint did not move")
			t.Logf("exit %d, 1 record before, 0 after; stop: %s", code, lineWith(r.out.String(), tt.want))
		})
	}
}

package test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestFaultBinlogPurged purges the binlog that holds the events after the
// stored checkpoint while the router is down. Started again, the router
// must stop with exit code 3 and a "binlog purged" error naming the
// checkpoint's GTID position, and publish nothing past the checkpoint.
func TestFaultBinlogPurged(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "purged"
	r := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 10, 0)
	ctx := t.Context()
	for range 20 {
		require.NoError(t, w.Tx(ctx, 1+rng.IntN(5)))
	}
	first := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, first, time.Minute)
	require.Equal(t, 0, r.Stop(30*time.Second))
	cp := e.CheckpointSet(name)
	require.Equal(t, e.GTIDPos(), cp, "checkpoint at the server's last GTID")

	// Events the router never saw, then only a binlog after them is kept.
	for range 20 {
		require.NoError(t, w.Tx(ctx, 1+rng.IntN(5)))
	}
	e.Exec("FLUSH BINARY LOGS")
	newest := e.NewestBinlog()
	e.WaitBinlogDumpsGone()
	// A binlog is also kept until InnoDB no longer needs it for crash
	// recovery (its binlog checkpoint), which comes a moment after FLUSH.
	conn, err := e.DB.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	var oldest, warning string
	harness.Eventually(t, 30*time.Second, "purging the binlogs before "+newest, func() bool {
		_, err := conn.ExecContext(ctx, fmt.Sprintf("PURGE BINARY LOGS TO '%s'", newest))
		require.NoError(t, err)
		_ = conn.QueryRowContext(ctx, "SHOW WARNINGS").Scan(new(any), new(any), &warning)
		require.NoError(t, conn.QueryRowContext(ctx, "SHOW BINARY LOGS").Scan(&oldest, new(any)))
		return oldest == newest
	})
	if warning != "" {
		t.Logf("PURGE warned before it could purge: %s", warning)
	}
	var gtidList string
	require.NoError(t, e.DB.QueryRow("SELECT @@gtid_binlog_state").Scan(&gtidList))
	t.Logf("checkpoint %s; binlogs purged up to %s (server binlog state %s)", cp, newest, gtidList)

	r.Restart()
	code := r.Wait(time.Minute)
	stopLine := r.LastLogLine("binlog-router stopped")
	t.Logf("router's last words: %s", stopLine)
	assert.Equal(t, 3, code, "exit code for a purged binlog")
	assert.Contains(t, stopLine, "binlog purged", "the error says the binlog was purged")
	assert.Contains(t, stopLine, cp, "the error names the checkpoint position")
	assert.Contains(t, stopLine, "binlog-router recover --since", "the error names the way back")

	got := col.Settle(t, time.Second)
	v := harness.CheckDelivery(t, first, got, nil)
	t.Logf("%s (only the events before the checkpoint)", v)
	assert.Equal(t, cp, e.CheckpointSet(name), "the checkpoint did not move")
}

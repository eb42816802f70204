package test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestRecoverReportsUncovered: the router publishes and stops; rows are
// committed after its checkpoint and their binlog purged. A window that
// starts after the checkpoint leaves the first of those rows out, and
// recover names how many and how to widen the window; with the table's
// oldest rows deleted (as retention would), recover says that rows of
// the gap may be gone for good. Neither is counted as recovered.
func TestRecoverReportsUncovered(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec("ALTER TABLE outbox ADD INDEX (created_at)")
	const name = "recover-uncovered"
	args := e.Args(name, "--idle-checkpoint", "1s")
	r := harness.StartRouter(t, args...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 8, 0)
	ctx := t.Context()
	for range 5 {
		require.NoError(t, w.Tx(ctx, 1+rng.IntN(3)))
	}
	first := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, first, time.Minute)
	require.Equal(t, 0, r.Stop(30*time.Second))
	written := e.MustCheckpoint(name).Time

	// The gap's early rows come after the checkpoint was written; the
	// window starts after them.
	waitDBClockPast(e, written)
	for range 10 {
		require.NoError(t, w.Tx(ctx, 1+rng.IntN(3)))
	}
	early := len(harness.CommittedRows(t, e.DB)) - len(first)
	since := waitDBClockPast(e, newestCreatedAt(e))
	for range 10 {
		require.NoError(t, w.Tx(ctx, 1+rng.IntN(3)))
	}
	late := len(harness.CommittedRows(t, e.DB)) - len(first) - early
	purgeAll(e)

	sinceArg := since.UTC().Format(time.RFC3339Nano)
	dry := recoverRun(t, args, "--since", sinceArg, "--dry-run")
	require.Equal(t, 0, dry.Code, "dry run: %s", harness.Tail(dry.Stderr, 3000))
	n, _, pub, _ := recoverTotals(t, dry)
	assert.Equal(t, []int{late, late}, []int{n, pub}, "the window holds the late rows only")
	line := harness.LineWith(dry.Stdout, "recover: not recovered: ")
	t.Logf("%d rows before the window, %d in it: %s", early, late, line)
	assert.Contains(t, line, strconv.Itoa(early)+" rows of shop.outbox were created after the router's checkpoint was written")
	assert.Contains(t, line, "widen the window with --since-checkpoint")

	dry = recoverRun(t, args, "--since-checkpoint", "--dry-run")
	require.Equal(t, 0, dry.Code, "dry run: %s", harness.Tail(dry.Stderr, 3000))
	assert.NotContains(t, dry.Stdout, "not recovered", "--since-checkpoint covers the gap")

	// Retention deleted every row created before the window's start.
	e.Exec("DELETE FROM outbox WHERE created_at < FROM_UNIXTIME(" + strconv.FormatFloat(float64(since.UnixMicro())/1e6, 'f', 6, 64) + ")")
	dry = recoverRun(t, args, "--since-checkpoint", "--dry-run")
	require.Equal(t, 0, dry.Code, "dry run: %s", harness.Tail(dry.Stderr, 3000))
	n, _, _, _ = recoverTotals(t, dry)
	assert.Equal(t, late, n)
	line = harness.LineWith(dry.Stdout, "recover: not recovered: ")
	t.Logf("after the delete: %s", line)
	assert.Contains(t, line, "the oldest row of shop.outbox was created")
	assert.Contains(t, line, "cannot be recovered")
}

// waitDBClockPast waits until the database's clock is past t and returns
// its time then.
func waitDBClockPast(e *harness.Env, t time.Time) time.Time {
	e.T.Helper()
	var now time.Time
	harness.Eventually(e.T, 10*time.Second, "the database's clock past "+t.Format(time.RFC3339Nano), func() bool {
		var s string
		require.NoError(e.T, e.DB.QueryRow("SELECT UNIX_TIMESTAMP(NOW(6))").Scan(&s))
		now = unixMicros(e.T, s)
		return now.After(t)
	})
	return now
}

// newestCreatedAt is the creation time of the outbox table's newest row.
func newestCreatedAt(e *harness.Env) time.Time {
	e.T.Helper()
	var s string
	require.NoError(e.T, e.DB.QueryRow("SELECT UNIX_TIMESTAMP(MAX(created_at)) FROM outbox").Scan(&s))
	return unixMicros(e.T, s)
}

// unixMicros parses Unix seconds with up to 6 decimals, as
// UNIX_TIMESTAMP prints them.
func unixMicros(t testing.TB, s string) time.Time {
	t.Helper()
	sec, frac, _ := strings.Cut(s, ".")
	secs, err := strconv.ParseInt(sec, 10, 64)
	require.NoError(t, err, s)
	us, err := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	require.NoError(t, err, s)
	return time.Unix(secs, us*1000)
}

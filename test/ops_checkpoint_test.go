package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestCheckpointCmdSetEarlierRepublishes sets the checkpoint back (by GTID
// and from a Debezium offset) and shows that run re-publishes exactly what
// comes after it; invalid positions are refused with the GTIDs named.
func TestCheckpointCmdSetEarlierRepublishes(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("cpset", "--idle-checkpoint", "200ms")
	r := harness.StartRouter(t, args...)
	first := writeEvents(e, "First", 3)
	mid := e.GTIDPos()
	second := writeEvents(e, "Second", 3)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	c.Read(len(first)+len(second), 60*time.Second)
	e.WaitCheckpoint("cpset", e.GTIDPos())
	require.Equal(t, 0, r.Stop(20*time.Second))

	cpSet(t, args, "--gtid", mid)
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet)
	r.Restart()
	got := c.Read(len(second), 60*time.Second)
	got = append(got, c.Quiet(time.Second)...)
	assert.ElementsMatch(t, second, harness.RecordIDs(got), "exactly the rows after the new checkpoint, again")
	require.Equal(t, 0, r.Stop(20*time.Second))

	// A Debezium offset holding a MariaDB GTID position.
	offset := fmt.Sprintf(`{"file":"mariadb-bin.000001","pos":1234,"gtids":%q}`, mid)
	cpSet(t, args, "--from-debezium-offset", offset)
	cp := showCheckpoint(t, args)
	assert.Equal(t, mid, cp.GTIDSet)
	assert.Equal(t, "mariadb", cp.Flavor)
	assert.Equal(t, e.Maria.ServerID(), cp.ServerID)
	r.Restart()
	got = c.Read(len(second), 60*time.Second)
	got = append(got, c.Quiet(time.Second)...)
	assert.ElementsMatch(t, second, harness.RecordIDs(got), "from the Debezium offset's gtids")
	require.Equal(t, 0, r.Stop(20*time.Second))
	before := showCheckpoint(t, args).GTIDSet

	for _, tc := range []struct {
		name   string
		flags  []string
		code   int
		stderr []string
	}{
		{"beyond the executed seq", []string{"--gtid", "0-1-999999"}, 2,
			[]string{"beyond what the server has executed", "0-1-999999", e.GTIDPos()}},
		{"unknown domain", []string{"--gtid", mid + ",7-1-3"}, 2, []string{"beyond", "7-1-3"}},
		{"other flavour", []string{"--gtid", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"}, 2,
			[]string{"invalid GTID syntax", "looks like a MySQL GTID"}},
		{"offset without gtids", []string{"--from-debezium-offset", `{"file":"mysql-bin.000003","pos":154}`}, 2,
			[]string{"Debezium offset", "no gtids", `file "mysql-bin.000003", pos 154`, "GTID only"}},
		{"offset not JSON", []string{"--from-debezium-offset", `file=mysql-bin.000003`}, 2,
			[]string{"parsing Debezium offset", "JSON object"}},
		{"no position", nil, 2, []string{"--gtid"}},
	} {
		res := harness.RunCLI(t, append(append([]string{"checkpoint", "set"}, args...), tc.flags...)...)
		assert.Equal(t, tc.code, res.Code, "%s: %s", tc.name, res.Stderr)
		for _, s := range tc.stderr {
			assert.Contains(t, res.Stderr, s, tc.name)
		}
	}
	assert.Equal(t, before, showCheckpoint(t, args).GTIDSet, "refused sets change nothing")
}

// TestCheckpointCmdPurged: a position whose binlog the server purged is
// refused, with the server's reason.
func TestCheckpointCmdPurged(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("cppurged")
	old := e.GTIDPos()
	writeEvents(e, "Purged", 2)
	e.Exec("FLUSH BINARY LOGS")
	writeEvents(e, "New", 2)
	file := e.NewestBinlog()
	e.PurgeBinlogsTo(file)

	res := harness.RunCLI(t, append(append([]string{"checkpoint", "set"}, args...), "--gtid", old)...)
	assert.Equal(t, 2, res.Code, "a refused set is bad usage: %s", res.Stderr)
	assert.Contains(t, res.Stderr, "binlog purged")
	assert.Contains(t, res.Stderr, fmt.Sprintf("no longer has the binlog after %q", old))
	assert.Contains(t, res.Stderr, "Could not find GTID state", "the server's reason")
	assert.Contains(t, res.Stderr, fmt.Sprintf("oldest binlog %s starts after", file))
	cpSet(t, args, "--gtid", e.GTIDPos())
	assert.Equal(t, e.GTIDPos(), showCheckpoint(t, args).GTIDSet, "a position the server has is accepted")
}

// TestCheckpointCmdResetThenLatest: after a reset the router starts per
// --start; with latest it publishes only rows written after it started.
func TestCheckpointCmdResetThenLatest(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("cpreset", "--idle-checkpoint", "200ms", "--start", "latest")
	r := harness.StartRouter(t, args...)
	require.NoError(t, r.WaitLog(ctxTimeout(t, 30*time.Second), "no checkpoint stored"))
	first := writeEvents(e, "First", 2)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	c.Read(len(first), 60*time.Second)
	e.WaitCheckpoint("cpreset", e.GTIDPos())
	require.Equal(t, 0, r.Stop(20*time.Second))

	res := cpReset(t, args)
	assert.Contains(t, res.Stderr, "deleted")
	_, err := e.Checkpoint("cpreset")
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing, "Load finds no checkpoint")
	res = harness.RunCLI(t, append([]string{"checkpoint", "show"}, args...)...)
	assert.Equal(t, 1, res.Code)
	assert.Contains(t, res.Stderr, "no checkpoint stored")

	skipped := writeEvents(e, "WhileStopped", 2)
	r2 := harness.StartRouter(t, args...)
	require.NoError(t, r2.WaitLog(ctxTimeout(t, 30*time.Second), "no checkpoint stored; starting"))
	last := writeEvents(e, "Last", 2)
	got := c.Read(len(last), 60*time.Second)
	got = append(got, c.Quiet(time.Second)...)
	assert.ElementsMatch(t, last, harness.RecordIDs(got), "only rows after the start; not %v", skipped)
	require.Equal(t, 0, r2.Stop(20*time.Second))
}

// TestCheckpointCmdRefusedWhileRunning: set and reset are refused while a
// router of the name runs, accepted without --force once it stopped, and
// accepted with --force while it runs, which fences it.
func TestCheckpointCmdRefusedWhileRunning(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("cprun", "--idle-checkpoint", "200ms")
	r := harness.StartRouter(t, args...)
	writeEvents(e, "Running", 2)
	mid := e.GTIDPos()
	writeEvents(e, "Running", 1)
	e.WaitCheckpoint("cprun", e.GTIDPos())
	head := e.GTIDPos()

	refused := func(when string) {
		t.Helper()
		for _, cmd := range [][]string{
			append(append([]string{"checkpoint", "set"}, args...), "--gtid", mid),
			append([]string{"checkpoint", "reset"}, args...),
		} {
			res := harness.RunCLI(t, cmd...)
			assert.Equal(t, 1, res.Code, "%s %s: %s", cmd[1], when, res.Stderr)
			assert.Contains(t, res.Stderr, `router "cprun" looks active`, cmd[1])
			assert.Contains(t, res.Stderr, "is connected to the source", "the router's binlog connection is seen")
			assert.Contains(t, res.Stderr, "--force")
		}
		assert.Equal(t, head, showCheckpoint(t, args).GTIDSet, "refused: unchanged")
	}
	refused("while running")

	require.Equal(t, 0, r.Stop(20*time.Second))
	cpSet(t, args, "--gtid", mid)
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet, "accepted once the router stopped")

	r.Restart()
	e.WaitCheckpoint("cprun", head) // it re-published the last transaction
	refused("after a restart")

	cpSet(t, args, "--gtid", mid, "--force")
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet, "forced")
	// The write fenced the router's transactional id: its next commit
	// fails, it stops, and the forced checkpoint stays.
	writeEvents(e, "AfterForce", 1)
	assert.NotEqual(t, 0, r.Wait(60*time.Second), "a fenced router stops with an error")
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet, "the fenced router could not overwrite it")
}

// cpSet runs `checkpoint set` until it succeeds: right after a router
// stopped it is refused for up to 2x --idle-checkpoint (and until the
// server has dropped the router's binlog connection).
func cpSet(t testing.TB, args []string, flags ...string) harness.CLIResult {
	t.Helper()
	return cpUntilAccepted(t, append(append([]string{"checkpoint", "set"}, args...), flags...))
}

func cpReset(t testing.TB, args []string) harness.CLIResult {
	t.Helper()
	return cpUntilAccepted(t, append([]string{"checkpoint", "reset"}, args...))
}

func cpUntilAccepted(t testing.TB, args []string) harness.CLIResult {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := harness.RunCLI(t, args...)
		if res.Code == 0 {
			return res
		}
		if !strings.Contains(res.Stderr, "looks active") || time.Now().After(deadline) {
			t.Fatalf("binlog-router %s: exit %d\n%s", strings.Join(args[:2], " "), res.Code, res.Stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func showCheckpoint(t testing.TB, args []string) checkpoint.Checkpoint {
	t.Helper()
	res := harness.RunCLI(t, append([]string{"checkpoint", "show"}, args...)...)
	require.Equal(t, 0, res.Code, res.Stderr)
	var cp checkpoint.Checkpoint
	require.NoError(t, json.Unmarshal([]byte(res.Stdout), &cp), res.Stdout)
	return cp
}

// ctxTimeout is a context cancelled after d or at the end of the test.
func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestCheckpointCmdActivitySigns: the activity check of checkpoint set
// and reset asks the broker's group and transaction coordinators: while a
// router with --ha runs and produces, a refusal names its election group's
// member and its transactional id's open transaction (besides its binlog
// connection); once it stopped, the group is empty, no transaction is
// open, and the set is accepted.
func TestCheckpointCmdActivitySigns(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "cpsigns"
	args := e.Args(name, "--ha", "--idle-checkpoint", "200ms")
	r := harness.StartRouter(t, args...)
	require.NoError(t, r.WaitLog(ctxTimeout(t, time.Minute), "this router is active"))
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 10, 0), 300)
	col.WaitProgress(t, r, 100, time.Minute, "routing")
	mid := e.GTIDPos()

	var refusal string
	harness.Eventually(t, time.Minute, "a refusal naming the open transaction", func() bool {
		res := harness.RunCLI(t, append(append([]string{"checkpoint", "set"}, args...), "--gtid", mid)...)
		require.Equal(t, 1, res.Code, res.Stderr)
		refusal = res.Stderr
		return strings.Contains(refusal, "is in state Ongoing")
	})
	t.Logf("broker %s; refusal: %s", harness.BrokerName(), strings.TrimSpace(refusal))
	assert.Contains(t, refusal, fmt.Sprintf(`its election group "binlog-router-%s" has members binlog-router@127.0.0.1`, name))
	assert.Regexp(t, fmt.Sprintf(`its transactional id "binlog-router-%s(#2)?" is in state Ongoing`, name), refusal)

	l.Stop()
	require.NoError(t, harness.Poll(time.Minute, func() bool { return col.Missing(harness.CommittedRows(t, e.DB)) == 0 }))
	require.Equal(t, 0, r.Stop(20*time.Second))
	res := cpSet(t, args, "--gtid", mid)
	assert.NotContains(t, res.Stderr, "election group")
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet)
}

// checkpointShowUntil runs `binlog-router checkpoint show args...` until
// it succeeds (a checkpoint is there) and returns its output; the timeout
// passing fails the test.
func checkpointShowUntil(t testing.TB, timeout time.Duration, args ...string) string {
	t.Helper()
	args = append([]string{"checkpoint", "show"}, args...)
	deadline := time.Now().Add(timeout)
	for {
		out, err := exec.Command(harness.RouterBin, args...).CombinedOutput()
		if err == nil {
			return string(out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

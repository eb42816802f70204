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
)

// TestCheckpointCmdSetEarlierRepublishes sets the checkpoint back (by GTID
// and from a Debezium offset) and shows that run re-publishes exactly what
// comes after it; invalid positions are refused with the GTIDs named.
func TestCheckpointCmdSetEarlierRepublishes(t *testing.T) {
	e := newEnv(t, envOpts{})
	args := e.args("cpset", "--idle-checkpoint", "200ms")
	r := startRouter(t, args...)
	first := e.writeEvents("First", 3)
	mid := e.gtidPos()
	second := e.writeEvents("Second", 3)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	c.read(len(first)+len(second), 60*time.Second)
	e.waitCheckpoint("cpset", e.gtidPos())
	require.Equal(t, 0, r.stop(20*time.Second))

	cpSet(t, args, "--gtid", mid)
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet)
	r.restart()
	got := c.read(len(second), 60*time.Second)
	got = append(got, c.quiet(time.Second)...)
	assert.ElementsMatch(t, second, recordIDs(got), "exactly the rows after the new checkpoint, again")
	require.Equal(t, 0, r.stop(20*time.Second))

	// A Debezium offset holding a MariaDB GTID position.
	offset := fmt.Sprintf(`{"file":"mariadb-bin.000001","pos":1234,"gtids":%q}`, mid)
	cpSet(t, args, "--from-debezium-offset", offset)
	cp := showCheckpoint(t, args)
	assert.Equal(t, mid, cp.GTIDSet)
	assert.Equal(t, "mariadb", cp.Flavor)
	assert.Equal(t, e.maria.ServerID(), cp.ServerID)
	r.restart()
	got = c.read(len(second), 60*time.Second)
	got = append(got, c.quiet(time.Second)...)
	assert.ElementsMatch(t, second, recordIDs(got), "from the Debezium offset's gtids")
	require.Equal(t, 0, r.stop(20*time.Second))
	before := showCheckpoint(t, args).GTIDSet

	for _, tc := range []struct {
		name   string
		flags  []string
		code   int
		stderr []string
	}{
		{"beyond the executed seq", []string{"--gtid", "0-1-999999"}, 2,
			[]string{"beyond what the server has executed", "0-1-999999", e.gtidPos()}},
		{"unknown domain", []string{"--gtid", mid + ",7-1-3"}, 2, []string{"beyond", "7-1-3"}},
		{"other flavour", []string{"--gtid", "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"}, 2,
			[]string{"invalid GTID syntax", "looks like a MySQL GTID"}},
		{"offset without gtids", []string{"--from-debezium-offset", `{"file":"mysql-bin.000003","pos":154}`}, 2,
			[]string{"Debezium offset", "no gtids", `file "mysql-bin.000003", pos 154`, "GTID only"}},
		{"offset not JSON", []string{"--from-debezium-offset", `file=mysql-bin.000003`}, 2,
			[]string{"parsing Debezium offset", "JSON object"}},
		{"no position", nil, 2, []string{"--gtid"}},
	} {
		res := cliRun(t, append(append([]string{"checkpoint", "set"}, args...), tc.flags...)...)
		assert.Equal(t, tc.code, res.code, "%s: %s", tc.name, res.stderr)
		for _, s := range tc.stderr {
			assert.Contains(t, res.stderr, s, tc.name)
		}
	}
	assert.Equal(t, before, showCheckpoint(t, args).GTIDSet, "refused sets change nothing")
}

// TestCheckpointCmdPurged: a position whose binlog the server purged is
// refused, with the server's reason.
func TestCheckpointCmdPurged(t *testing.T) {
	e := newEnv(t, envOpts{})
	args := e.args("cppurged")
	old := e.gtidPos()
	e.writeEvents("Purged", 2)
	e.exec("FLUSH BINARY LOGS")
	e.writeEvents("New", 2)
	file := e.newestBinlog()
	e.purgeBinlogsTo(file)

	res := cliRun(t, append(append([]string{"checkpoint", "set"}, args...), "--gtid", old)...)
	assert.Equal(t, 2, res.code, "a refused set is bad usage: %s", res.stderr)
	assert.Contains(t, res.stderr, "binlog purged")
	assert.Contains(t, res.stderr, fmt.Sprintf("no longer has the binlog after %q", old))
	assert.Contains(t, res.stderr, "Could not find GTID state", "the server's reason")
	assert.Contains(t, res.stderr, fmt.Sprintf("oldest binlog %s starts after", file))
	cpSet(t, args, "--gtid", e.gtidPos())
	assert.Equal(t, e.gtidPos(), showCheckpoint(t, args).GTIDSet, "a position the server has is accepted")
}

// TestCheckpointCmdResetThenLatest: after a reset the router starts per
// --start; with latest it publishes only rows written after it started.
func TestCheckpointCmdResetThenLatest(t *testing.T) {
	e := newEnv(t, envOpts{})
	args := e.args("cpreset", "--idle-checkpoint", "200ms", "--start", "latest")
	r := startRouter(t, args...)
	require.NoError(t, r.waitLog(ctxTimeout(t, 30*time.Second), "no checkpoint stored"))
	first := e.writeEvents("First", 2)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	c.read(len(first), 60*time.Second)
	e.waitCheckpoint("cpreset", e.gtidPos())
	require.Equal(t, 0, r.stop(20*time.Second))

	res := cpReset(t, args)
	assert.Contains(t, res.stderr, "deleted")
	_, err := e.checkpoint("cpreset")
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing, "Load finds no checkpoint")
	res = cliRun(t, append([]string{"checkpoint", "show"}, args...)...)
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "no checkpoint stored")

	skipped := e.writeEvents("WhileStopped", 2)
	r2 := startRouter(t, args...)
	require.NoError(t, r2.waitLog(ctxTimeout(t, 30*time.Second), "no checkpoint stored; starting"))
	last := e.writeEvents("Last", 2)
	got := c.read(len(last), 60*time.Second)
	got = append(got, c.quiet(time.Second)...)
	assert.ElementsMatch(t, last, recordIDs(got), "only rows after the start; not %v", skipped)
	require.Equal(t, 0, r2.stop(20*time.Second))
}

// TestCheckpointCmdRefusedWhileRunning: set and reset are refused while a
// router of the name runs, accepted without --force once it stopped, and
// accepted with --force while it runs, which fences it.
func TestCheckpointCmdRefusedWhileRunning(t *testing.T) {
	e := newEnv(t, envOpts{})
	args := e.args("cprun", "--idle-checkpoint", "200ms")
	r := startRouter(t, args...)
	e.writeEvents("Running", 2)
	mid := e.gtidPos()
	e.writeEvents("Running", 1)
	e.waitCheckpoint("cprun", e.gtidPos())
	head := e.gtidPos()

	refused := func(when string) {
		t.Helper()
		for _, cmd := range [][]string{
			append(append([]string{"checkpoint", "set"}, args...), "--gtid", mid),
			append([]string{"checkpoint", "reset"}, args...),
		} {
			res := cliRun(t, cmd...)
			assert.Equal(t, 1, res.code, "%s %s: %s", cmd[1], when, res.stderr)
			assert.Contains(t, res.stderr, `router "cprun" looks active`, cmd[1])
			assert.Contains(t, res.stderr, "is connected to the source", "the router's binlog connection is seen")
			assert.Contains(t, res.stderr, "--force")
		}
		assert.Equal(t, head, showCheckpoint(t, args).GTIDSet, "refused: unchanged")
	}
	refused("while running")

	require.Equal(t, 0, r.stop(20*time.Second))
	cpSet(t, args, "--gtid", mid)
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet, "accepted once the router stopped")

	r.restart()
	e.waitCheckpoint("cprun", head) // it re-published the last transaction
	refused("after a restart")

	cpSet(t, args, "--gtid", mid, "--force")
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet, "forced")
	// The write fenced the router's transactional id: its next commit
	// fails, it stops, and the forced checkpoint stays.
	e.writeEvents("AfterForce", 1)
	assert.NotEqual(t, 0, r.wait(60*time.Second), "a fenced router stops with an error")
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet, "the fenced router could not overwrite it")
}

// cpSet runs `checkpoint set` until it succeeds: right after a router
// stopped it is refused for up to 2x --idle-checkpoint (and until the
// server has dropped the router's binlog connection).
func cpSet(t testing.TB, args []string, flags ...string) cliResult {
	t.Helper()
	return cpUntilAccepted(t, append(append([]string{"checkpoint", "set"}, args...), flags...))
}

func cpReset(t testing.TB, args []string) cliResult {
	t.Helper()
	return cpUntilAccepted(t, append([]string{"checkpoint", "reset"}, args...))
}

func cpUntilAccepted(t testing.TB, args []string) cliResult {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := cliRun(t, args...)
		if res.code == 0 {
			return res
		}
		if !strings.Contains(res.stderr, "looks active") || time.Now().After(deadline) {
			t.Fatalf("binlog-router %s: exit %d\n%s", strings.Join(args[:2], " "), res.code, res.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func showCheckpoint(t testing.TB, args []string) checkpoint.Checkpoint {
	t.Helper()
	res := cliRun(t, append([]string{"checkpoint", "show"}, args...)...)
	require.Equal(t, 0, res.code, res.stderr)
	var cp checkpoint.Checkpoint
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &cp), res.stdout)
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
	rng := faultRand(t)
	e := newEnv(t, envOpts{})
	const name = "cpsigns"
	args := e.args(name, "--ha", "--idle-checkpoint", "200ms")
	r := startRouter(t, args...)
	require.NoError(t, r.waitLog(ctxTimeout(t, time.Minute), "this router is active"))
	col := newCollector(t, e.kafka.Brokers, e.topicRegex())
	l := startLoad(t, newWriter(e.db, rng, "agg", 10, 0), 300)
	col.waitProgress(t, r, 100, time.Minute, "routing")
	mid := e.gtidPos()

	var refusal string
	eventually(t, time.Minute, "a refusal naming the open transaction", func() bool {
		res := cliRun(t, append(append([]string{"checkpoint", "set"}, args...), "--gtid", mid)...)
		require.Equal(t, 1, res.code, res.stderr)
		refusal = res.stderr
		return strings.Contains(refusal, "is in state Ongoing")
	})
	t.Logf("broker %s; refusal: %s", brokerName(), strings.TrimSpace(refusal))
	assert.Contains(t, refusal, fmt.Sprintf(`its election group "binlog-router-%s" has members binlog-router@127.0.0.1`, name))
	assert.Regexp(t, fmt.Sprintf(`its transactional id "binlog-router-%s(#2)?" is in state Ongoing`, name), refusal)

	l.stop()
	require.NoError(t, poll(time.Minute, func() bool { return col.missing(committedRows(t, e.db)) == 0 }))
	require.Equal(t, 0, r.stop(20*time.Second))
	res := cpSet(t, args, "--gtid", mid)
	assert.NotContains(t, res.stderr, "election group")
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
		out, err := exec.Command(routerBin, args...).CombinedOutput()
		if err == nil {
			return string(out)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

package test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// recoverKillGap is the rows committed in bulk while the router is down
// and its binlog purged, on top of what the load writes meanwhile.
const recoverKillGap = 50_000

var knownIDsRE = regexp.MustCompile(`"known_ids":(\d+)`)

// recoverAttempt is one run of `recover` in TestRecoverKill.
type recoverAttempt struct {
	stage  string // the last stage its log reached
	known  int    // ids it read from the outbox topics (-1: it did not get there)
	killed bool   // SIGKILLed (else it ran to its end)
	open   bool   // its Kafka transaction was open at the kill (kfake only)
	onProd bool   // killed at a produce request (kfake only)
	// checkpointed: the router's checkpoint had moved when it ended
	checkpointed bool
	// progress: the router's checkpoint record held its progress when it
	// ended; resumed: it went on from an earlier attempt's progress
	progress, resumed bool
}

// recoverStage is the last step of a recovery its log shows.
func recoverStage(log string) string {
	stage := "starting"
	for _, s := range []struct{ line, stage string }{
		{"recover starting", "checking the router is stopped"},
		{"reading the event ids already in the outbox topics", "reading published ids"},
		{"event ids already published read", "opening the snapshot"},
		{"snapshot started", "publishing"},
		{`"message":"recovering"`, "publishing"},
		{"the checkpoint at the snapshot", "committing the last transaction"},
	} {
		if strings.Contains(log, s.line) {
			stage = s.stage
		}
	}
	return stage
}

// recoveryPublished returns the records a recovery of name has committed
// so far, over all its runs, as its progress in the router's checkpoint
// record says (0 when the record holds none).
func recoveryPublished(e *harness.Env, name string) int64 {
	cp, err := e.Checkpoint(name)
	if err != nil || cp.Recovery == nil {
		return 0
	}
	return cp.Recovery.Published
}

// TestRecoverKill: the router publishes under a continuous load and
// stops; 50,000 rows more are committed and their binlog purged, so run
// exits 3. recover --since-checkpoint is SIGKILLed at random points (at
// least 5 times: most while it publishes, after it has committed some
// (or, on kfake, at a produce request), one in its last transaction,
// which holds the checkpoint) and restarted each time, then runs to its
// end; the router's checkpoint moves only with that last transaction,
// the earlier ones store the recovery's progress in its record, from
// which run refuses to start (exit 3) and the next attempt goes on. run
// streams on while the load goes on. A read_committed consumer reads
// every committed row exactly once and in order per aggregate, and each
// attempt publishes only what the ones before it had not committed.
func TestRecoverKill(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "recover-kill"
	const kills = 5
	args := e.Args(name, "--idle-checkpoint", "1s")
	t.Logf("broker %s", e.BrokerName())
	r := harness.StartRouter(t, args...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 40, 0), 300)
	col.WaitProgress(t, r, 300, time.Minute, "the router publishes")
	require.Equal(t, 0, r.Stop(30*time.Second))

	bulk := harness.NewWriter(e.DB, rng, "bulk", 40, 0)
	start := time.Now()
	for range recoverKillGap / 1000 {
		require.NoError(t, bulk.Tx(t.Context(), 1000))
	}
	t.Logf("%d rows committed in bulk in %s", recoverKillGap, time.Since(start).Round(time.Millisecond))
	purgeAll(e)
	r.Restart()
	require.Equal(t, 3, r.Wait(time.Minute), "run cannot resume: its binlog is purged")
	col.Settle(t, time.Second)
	gap := col.Missing(harness.CommittedRows(t, e.DB))
	require.GreaterOrEqual(t, gap, recoverKillGap)
	t.Logf("rows in the gap when run exited 3: %d (%d in bulk, the rest from the load)", gap, recoverKillGap)

	// The router is told stopped by its checkpoint's age: twice
	// --idle-checkpoint.
	cp := e.MustCheckpoint(name)
	time.Sleep(time.Until(cp.Time.Add(2500 * time.Millisecond)))

	var watch *harness.TxnWatch
	if e.Kafka.Cluster != nil {
		watch = harness.WatchTxns(e.Kafka.Cluster, "binlog-router-recover-"+name)
	}
	rec := harness.StartCommand(t, "recover", append(append([]string{}, args...), "--since-checkpoint", "--commit-records", "2000")...)
	var attempts []recoverAttempt
	refused := false // run was started once from a recovery's progress
	out := func() string { return rec.Out.String()[rec.Mark:] }
	for killed := 0; killed < kills; {
		a := recoverAttempt{known: -1}
		if killed == 0 {
			// Early: the check that the router is stopped, the scan of
			// the topics for published ids, the snapshot.
			harness.Eventually(t, time.Minute, "recover starts", func() bool {
				return strings.Contains(out(), "recover starting") || !rec.Running()
			})
			time.Sleep(harness.RandDur(rng, 0, 100*time.Millisecond))
		} else if killed == kills-1 {
			// In its last transaction, once it produces the checkpoint
			// after the last rows: before or after the commit, the
			// records and the checkpoint are there together or not.
			harness.Eventually(t, 2*time.Minute, "recover reaches its last transaction", func() bool {
				return strings.Contains(out(), "the checkpoint at the snapshot") || !rec.Running()
			})
		} else {
			base := recoveryPublished(e, name)
			harness.Eventually(t, 2*time.Minute, "recover reaches its snapshot", func() bool {
				return strings.Contains(out(), "snapshot started") || !rec.Running()
			})
			if watch == nil || killed%2 == 0 {
				// While it publishes, once it has committed a random
				// share of the first half of what is left (a kill timed
				// by the clock would miss a fast recovery), or else in
				// its last transaction.
				left := max(int64(gap)-base, 2)
				target := base + 1 + rng.Int64N(left/2)
				harness.Eventually(t, 2*time.Minute, "recover commits some rows", func() bool {
					return !rec.Running() || strings.Contains(out(), "the checkpoint at the snapshot") ||
						recoveryPublished(e, name) >= target
				})
			}
		}
		switch {
		case !rec.Running():
		case watch != nil && (killed%2 == 1 || killed == kills-1):
			a.open, a.onProd = watch.KillAtProduce(rec.Kill, 3*time.Second)
		case watch != nil:
			a.open = watch.Kill(rec.Kill)
		default:
			rec.Kill()
		}
		a.stage = recoverStage(out())
		if m := knownIDsRE.FindStringSubmatch(out()); m != nil {
			a.known, _ = strconv.Atoi(m[1])
		}
		if ps := rec.Cmd.ProcessState; ps != nil && ps.ExitCode() == -1 {
			a.killed = true
			killed++
		} else {
			t.Logf("recover ended before its kill: %s\n%s", rec.DescribeExit(), harness.Tail(out(), 5))
			require.Equal(t, 0, rec.ExitCode(), "recover: %s", harness.Tail(out(), 20))
		}
		a.resumed = strings.Contains(out(), "going on from the unfinished recovery")
		now := e.MustCheckpoint(name)
		a.progress = now.Recovery != nil
		if a.progress && !refused {
			// run refuses to start from a half-done recovery.
			r.Restart()
			require.Equal(t, 3, r.Wait(time.Minute), "run from a checkpoint holding a recovery's progress: %s", harness.Tail(r.Out.String(), 5))
			assert.Contains(t, r.Out.String(), "a recover of this router is unfinished")
			refused = true
		}
		// The checkpoint moves only with the last transaction.
		if now.GTIDSet != cp.GTIDSet {
			a.checkpointed = true
			assert.Equal(t, "committing the last transaction", a.stage, "attempt %d moved the checkpoint to %s before its last transaction", len(attempts)+1, now.GTIDSet)
			// It is fresh: the next attempt waits until the router looks
			// stopped again.
			cp = now
			time.Sleep(time.Until(cp.Time.Add(2500 * time.Millisecond)))
		}
		attempts = append(attempts, a)
		rec.Restart()
	}
	code := rec.Wait(3 * time.Minute)
	final := out()
	require.Equal(t, 0, code, "recover to its end: %s", harness.Tail(final, 20))
	n, known, pub, snap := recoverTotals(t, harness.CLIResult{Code: code, Stdout: final})
	attempts = append(attempts, recoverAttempt{stage: "done", known: known, resumed: strings.Contains(final, "going on from the unfinished recovery")})
	assert.Equal(t, snap, e.CheckpointSet(name), "the checkpoint is the last snapshot's position")

	// What each attempt committed is what the next one found in Kafka.
	duringPublish, inLast, resumed := 0, 0, attempts[len(attempts)-1].resumed
	for i, a := range attempts[:len(attempts)-1] {
		if a.killed && a.stage == "committing the last transaction" {
			inLast++
			if a.onProd {
				assert.False(t, a.checkpointed, "attempt %d, killed at a produce request of its last transaction, moved the checkpoint", i+1)
			}
		}
		published := "?"
		if a.known >= 0 {
			if next := attempts[i+1].known; next >= 0 {
				published = strconv.Itoa(next - a.known)
				if a.killed && a.stage == "publishing" && next > a.known {
					duringPublish++
				}
			}
		}
		txn := "not watched on this broker"
		if watch != nil {
			txn = fmt.Sprintf("open %v, at a produce request %v", a.open, a.onProd)
		}
		t.Logf("attempt %d: killed %v in stage %q (Kafka transaction: %s; checkpoint moved %v); went on from an earlier one %v, left its progress %v; ids in Kafka at its start %d, published %s",
			i+1, a.killed, a.stage, txn, a.checkpointed, a.resumed, a.progress, a.known, published)
		resumed = resumed || a.resumed
	}
	t.Logf("attempt %d ran to its end: %d rows in the window, %d already in Kafka, %d published, snapshot %s", len(attempts), n, known, pub, snap)
	assert.Positive(t, inLast, "no kill landed in the last transaction")
	assert.True(t, refused, "no kill left a recovery's progress in the checkpoint record")
	assert.True(t, resumed, "no attempt went on from an earlier one's progress")
	assert.Positive(t, duringPublish, "no kill landed while recover was publishing and had committed some: the test proved less than it says")

	// run streams on from the recovery's checkpoint while the load goes
	// on.
	r.Restart()
	col.WaitProgress(t, r, 300, time.Minute, "run streams on")
	v := harness.FinishRun(t, e.DB, l, col, r, 3*time.Minute)
	t.Logf("%s; %d rows in the gap, %d attempts (%d SIGKILLs, %d landing while publishing, %d in the last transaction)", v, gap, len(attempts), kills, duringPublish, inLast)
	assert.Zero(t, v.Lost)
	assert.Zero(t, v.Duplicated)
}

package test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/test/harness"
)

// The stop suite: a SIGTERM is exact (the stored checkpoint covers
// exactly the records a read_committed consumer reads, not more, which
// would lose rows at the next start, and not fewer, which would repeat
// them) and prompt (it is noticed at once, and inside a large binlog
// transaction it commits there half --shutdown-timeout after the signal).

const (
	stoppingLine = "stopping: finishing the current transaction"
	stopInside   = "stopping inside a binlog transaction"
)

// TestStopInsideBigTransaction sends SIGTERM while the router streams one
// binlog transaction of 20,000 outbox rows with --commit-records 100, a
// few hundred rows into it, with --shutdown-timeout 2s and with the
// default 10s (and 100,000 rows on Apache Kafka, which takes them faster
// than the slowed kfake): the router logs the stop at once, commits inside
// the transaction half the timeout later, and exits 0; the checkpoint
// stored then covers exactly the records read; a restart delivers every
// row exactly once.
func TestStopInsideBigTransaction(t *testing.T) {
	for _, timeout := range []time.Duration{2 * time.Second, 10 * time.Second} {
		t.Run(timeout.String(), func(t *testing.T) { stopInsideBigTransaction(t, timeout) })
	}
}

func stopInsideBigTransaction(t *testing.T, timeout time.Duration) {
	rng := harness.FaultRand(t)
	const name = "stop"
	n := 20_000
	var e *harness.Env
	if harness.OnApache() {
		e = harness.NewEnv(t, harness.EnvOpts{}) // the shared node: nothing happens to it
		if timeout > 2*time.Second {
			n = 100_000
		}
	} else {
		e = slowKfakeEnv(t)
		// A broker that answers a produce request in 10 ms (2s timeout)
		// or 50 ms (10s), as a real one may: kfake alone takes the 20,000
		// rows in about a second and a half, too quick for a stop to find
		// the transaction still open half the timeout later.
		slowProduce(t, e, timeout/200)
	}
	r := harness.StartRouterEnv(t, noExitSleep, e.Args(name, "--commit-records", "100", "--shutdown-timeout", timeout.String())...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 10, 0)
	ctx := context.Background()
	for range 5 {
		require.NoError(t, w.Tx(ctx, 3))
	}
	col.WaitProgress(t, r, 15, time.Minute, "small transactions before")

	bigGTID := backfill(e, t, n)
	// The middle of the big transaction, by what a consumer reads.
	at := n/40 + rng.IntN(n/20)
	harness.Eventually(t, 2*time.Minute, fmt.Sprintf("%d rows of the big transaction read", at), func() bool {
		return col.Distinct() >= 15+at || !r.Running()
	})
	r.MustRun("inside the big transaction")
	s := sigterm(t, r, col, time.Minute)
	t.Logf("SIGTERM after %d events read: exit code %d after %s, %q logged after %s, the last commit began after %s, routing ended after %s",
		s.readBefore, s.code, s.took.Round(time.Millisecond), stoppingLine, s.noticed.Round(time.Millisecond), s.committed.Round(time.Millisecond), s.ended.Round(time.Millisecond))
	assert.Equal(t, 0, s.code, "exit code of a stop inside the big transaction")
	assert.Equal(t, 1, r.LogCount(stoppingLine), "the stop is logged once")
	assert.NotContains(t, r.Out.String(), "--kafka-timeout", "Kafka was fine")
	cp := e.MustCheckpoint(name)
	if cp.TxnGTID != bigGTID || cp.TxnRows <= 0 || cp.TxnRows >= n {
		t.Fatalf("checkpoint %s + %q rows %d after the stop: not inside the big transaction %s (the test proved nothing)", cp.GTIDSet, cp.TxnGTID, cp.TxnRows, bigGTID)
	}
	assert.Equal(t, 1, r.LogCount(stopInside), "the commit inside the transaction is logged")
	// Inside a transaction the stop commits half the timeout after the
	// signal, then exits: one commit, and the process's exit, later. A
	// commit takes tens of milliseconds here (the slowed kfake, Apache
	// Kafka's transaction cycle); the margin is for the race detector on
	// two shared cores.
	assert.GreaterOrEqual(t, s.took, timeout/2, "the stop did not wait half the shutdown timeout for the transaction to end")
	assert.Less(t, s.took, timeout/2+700*time.Millisecond, "the stop took more than half the shutdown timeout and one commit")
	assert.Less(t, s.noticed, 500*time.Millisecond, "the stop was not logged at once")
	atStop := col.Settle(t, time.Second)
	t.Logf("checkpoint after the stop: %s + %s rows %d; %d records read", cp.GTIDSet, cp.TxnGTID, cp.TxnRows, len(atStop))

	restartAndCheck(t, e, r, w, col, cp, atStop, n+30, 30*time.Second, time.Second)
}

// noExitSleep is the environment of a router whose exit is timed: a
// binary built with the race detector sleeps a second when it exits
// (GORACE atexit_sleep_ms, default 1000), which a user's binary does not.
var noExitSleep = []string{"GORACE=atexit_sleep_ms=0"}

// stopped is what sigterm measured.
type stopped struct {
	code       int
	took       time.Duration // from the signal to the exit
	noticed    time.Duration // from the signal to stoppingLine in the log (polled every 5 ms)
	committed  time.Duration // from the signal to stopInside or "binlog-router stopped", whichever first
	ended      time.Duration // from the signal to "binlog-router stopped"
	readBefore int
}

// sigterm sends SIGTERM to the running router r and waits for its exit.
func sigterm(t *testing.T, r *harness.Router, col *harness.Collector, timeout time.Duration) stopped {
	t.Helper()
	mark := r.Out.Len()
	before := col.Distinct()
	began := time.Now()
	require.NoError(t, r.Cmd.Process.Signal(syscall.SIGTERM))
	s := stopped{noticed: -1, readBefore: before}
	for deadline := began.Add(timeout); r.Running() && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		out := r.Out.String()[mark:]
		if s.noticed < 0 && strings.Contains(out, stoppingLine) {
			s.noticed = time.Since(began)
		}
		if s.committed == 0 && (strings.Contains(out, stopInside) || strings.Contains(out, "binlog-router stopped")) {
			s.committed = time.Since(began)
		}
		if s.ended == 0 && strings.Contains(out, "binlog-router stopped") {
			s.ended = time.Since(began)
		}
	}
	s.code = r.Wait(time.Until(began.Add(timeout)))
	s.took = time.Since(began)
	if s.noticed < 0 && strings.Contains(r.Out.String()[mark:], stoppingLine) {
		s.noticed = s.took
	}
	if s.noticed < 0 {
		t.Errorf("the router never logged %q after SIGTERM", stoppingLine)
	}
	if s.code != 0 {
		t.Logf("router stopped by SIGTERM: %s; log:\n%s", r.DescribeExit(), harness.Tail(r.Out.String()[mark:], 20))
	}
	return s
}

// checkStopExact checks a checkpoint stored by a stop against the
// records a read_committed consumer read right after it (atStop): a
// record read is covered by the checkpoint (its GTID is in the set, or it
// is one of the first TxnRows rows of TxnGTID), and every event the
// checkpoint covers was read. The rows of each transaction are counted
// from all, every event read once after the restart.
func checkStopExact(t *testing.T, cp *checkpoint.Checkpoint, atStop, all []harness.Delivered) {
	t.Helper()
	set, err := gtid.Parse(gtid.MariaDB, cp.GTIDSet)
	require.NoError(t, err)
	inSet := func(g string) bool {
		one, err := gtid.Parse(gtid.MariaDB, g)
		require.NoError(t, err, "GTID header %q", g)
		return set.Contains(one)
	}
	rowsOf := map[string]int{} // event ids per GTID, every event once
	seen := map[string]bool{}
	for _, d := range all {
		if !seen[d.ID] {
			seen[d.ID] = true
			rowsOf[d.GTID]++
		}
	}
	covered := cp.TxnRows
	for g, k := range rowsOf {
		if inSet(g) {
			covered += k
		}
	}
	read, inTxn, ahead := 0, 0, 0
	seen = map[string]bool{}
	for _, d := range atStop {
		if seen[d.ID] {
			continue // CheckDelivery reports duplicates
		}
		seen[d.ID] = true
		read++
		switch {
		case d.GTID == cp.TxnGTID:
			inTxn++
		case !inSet(d.GTID):
			ahead++
		}
	}
	t.Logf("checkpoint after the stop covers %d events (%d inside %q); a read_committed consumer read %d then (%d inside it, %d outside the checkpoint)",
		covered, cp.TxnRows, cp.TxnGTID, read, inTxn, ahead)
	assert.Zero(t, ahead, "records read that the checkpoint does not cover: the next start repeats them")
	assert.Equal(t, cp.TxnRows, inTxn, "records of the open transaction read, against the checkpoint's txn_rows")
	assert.Equal(t, covered, read, "events the checkpoint covers, against the records read: more would be lost at the next start, fewer repeated")
}

// TestStopApacheBrokerRestartDuringDrain sends SIGTERM while the router
// streams a 20,000-row transaction and, during the drain that follows,
// stops its private Apache Kafka node gracefully and starts it again
// (a restart of the broker while the router finishes its last Kafka
// transaction: at a random moment from the signal to half the default
// --shutdown-timeout, where the stop commits inside the transaction, or
// at the router's first EndTxn after that moment, the commit's answer
// lost).
// Whatever the exit code (0: the last commit went through once the node
// was back; 4: the drain passed the timeout and aborted; 1: the Kafka
// error that ended the drain, which a stop does not retry),
// the checkpoint stored then covers exactly the records a read_committed
// consumer reads, and a restarted router delivers every row exactly once.
func TestStopApacheBrokerRestartDuringDrain(t *testing.T) {
	rng := harness.FaultRand(t)
	k, proxies := harness.PrivateApacheProxied(t, devenv.ApacheKafkaConfig{})
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	e.UseProxies(proxies)
	const n, name = 20_000, "drain"
	const timeout = 10 * time.Second
	r := harness.StartRouterEnv(t, noExitSleep, e.Args(name, "--commit-records", "100", "--shutdown-timeout", timeout.String())...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 10, 0)
	ctx := context.Background()
	for range 5 {
		require.NoError(t, w.Tx(ctx, 3))
	}
	col.WaitProgress(t, r, 15, 2*time.Minute, "small transactions before")
	bigGTID := backfill(e, t, n)
	at := n/40 + rng.IntN(n/20)
	harness.Eventually(t, 2*time.Minute, fmt.Sprintf("%d rows of the big transaction read", at), func() bool {
		return col.Distinct() >= 15+at || !r.Running()
	})
	r.MustRun("inside the big transaction")

	// The outage, from pause after the signal for down.
	// The outage begins pause after the signal: at once, or (atCommit) at
	// the router's next EndTxn then, which the node receives and whose
	// answer the router never gets (the commit's outcome is unknown to it).
	pause := harness.RandDur(rng, 0, timeout/2)
	down := harness.RandDur(rng, time.Second, 3*time.Second)
	atCommit := rng.IntN(2) == 0
	var outage struct{ stopping, stopped, back time.Duration }
	restarted := make(chan struct{})
	signalled := time.Now()
	go func() {
		defer close(restarted)
		time.Sleep(pause)
		if atCommit {
			if !e.Proxy.Wait(e.Proxy.At(kmsg.EndTxn, func() harness.ProxyAction { return harness.ForwardDrop }), time.Minute) {
				return // the router sent no EndTxn after pause: no outage
			}
		} else {
			waitTxnSettled(t, e.Kafka.Brokers, harness.RouterTxnIDs(name)...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		outage.stopping = time.Since(signalled)
		if err := k.Apache.StopNode(ctx, 0); err != nil {
			t.Errorf("stopping the node: %v", err)
		}
		outage.stopped = time.Since(signalled)
		time.Sleep(down)
		if err := k.Apache.StartNode(ctx, 0); err != nil {
			t.Errorf("starting the node again: %v", err)
		}
		outage.back = time.Since(signalled)
	}()
	s := sigterm(t, r, col, 3*time.Minute)
	<-restarted
	t.Logf("SIGTERM after %d events read: exit code %d after %s (%q after %s, routing ended after %s); the node was told to stop %s after the signal (at an EndTxn: %v), stopped after %s, back after %s",
		s.readBefore, s.code, s.took.Round(time.Millisecond), stoppingLine, s.noticed.Round(time.Millisecond), s.ended.Round(time.Millisecond),
		outage.stopping.Round(time.Millisecond), atCommit, outage.stopped.Round(time.Millisecond), outage.back.Round(time.Millisecond))
	if outage.stopping == 0 || outage.stopping > s.took {
		t.Logf("the router had exited before the node stopped: this run tested a restart after the stop, not during it")
	}
	// Read once the node serves read_committed reads again.
	var cp *checkpoint.Checkpoint
	harness.Eventually(t, 2*time.Minute, "loading the checkpoint after the stop", func() bool {
		var err error
		cp, err = e.Checkpoint(name)
		return err == nil
	})
	atStop := col.Settle(t, 3*time.Second)
	inside := cp.TxnGTID == bigGTID
	t.Logf("checkpoint after the stop: %s + %q rows %d (inside the big transaction: %v); %d records read",
		cp.GTIDSet, cp.TxnGTID, cp.TxnRows, inside, len(atStop))

	restartAndCheck(t, e, r, w, col, cp, atStop, n+30, time.Minute, 2*time.Second)
}

// restartAndCheck starts the stopped router again, writes 5 more
// transactions, and checks that every one of the events rows was read
// once and that the checkpoint stored at the stop covered exactly the
// records read then (atStop).
func restartAndCheck(t *testing.T, e *harness.Env, r *harness.Router, w *harness.Writer, col *harness.Collector, cp *checkpoint.Checkpoint, atStop []harness.Delivered, events int, stop, quiet time.Duration) {
	t.Helper()
	r.Restart()
	for range 5 {
		require.NoError(t, w.Tx(context.Background(), 3))
	}
	want := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, want, 5*time.Minute)
	r.MustRun("end")
	require.Equal(t, 0, r.Stop(stop))
	all := col.Settle(t, quiet)
	v := harness.CheckDelivery(t, want, all, nil)
	assert.Equal(t, events, v.Events)
	checkStopExact(t, cp, atStop, all)
	t.Logf("broker %s; after the restart: %s", e.BrokerName(), v)
}

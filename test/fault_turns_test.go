package test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/relay"
	"github.com/binlog-router/binlog-router/test/harness"
)

// The windows of transactions in turn (DESIGN.md, "Transactions in
// turn"): on Apache Kafka, EndTxn returns before the commit markers are
// written, and the router's next transaction, on its other transactional
// id, produces while they are. Each suite ends with a read_committed
// franz-go consumer and kcat reading every committed row once, in
// per-aggregate order. They run on the Apache Kafka pass: kfake writes the
// markers before it answers EndTxn, so it has no such window.

// TestFaultTurnsKillBetweenCommits SIGKILLs the router after one of its
// transactional ids committed and before the other one's next commit, at
// three points in turn: at the other id's first produce after the commit
// (the committed transaction's markers may still be being written; the
// records are appended for a dead producer and the next session's
// InitProducerId aborts them), and at the other id's EndTxn, which the
// proxy either lets through after the router died (the broker commits a
// transaction whose router is gone, and the next session must resume
// after it) or drops (the next session aborts it, and its rows are
// produced again).
func TestFaultTurnsKillBetweenCommits(t *testing.T) {
	tw := startTurns(t, "turnkill")
	e, p, ids, r, col := tw.e, tw.p, tw.ids, tw.r, tw.col
	probe, err := harness.NewTxnProbe(e.Kafka.Brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	kills := harness.ByMode(6, 18)
	counts := map[string]int{}
	for i := range kills {
		col.WaitProgress(t, r, 200, 2*time.Minute, fmt.Sprintf("routing before kill %d", i+1))
		committed, id := ids[i%2], ids[(i+1)%2]
		point := []string{"first produce", "EndTxn, forwarded", "EndTxn, dropped"}[i%3]
		var before string // the committed transaction's state at the kill
		kill := func() {
			before = probe.State(committed)
			r.Kill()
		}
		trapAt := func(key kmsg.Key, action harness.ProxyAction) *harness.ProxyTrap {
			return p.AtRequest(key, func(req kmsg.Request) bool { return txnIDOf(req) == id }, func() harness.ProxyAction {
				kill()
				return action
			})
		}
		// The kill's trap is armed when the committed id's EndTxn passes.
		armed := make(chan *harness.ProxyTrap, 1)
		commit := p.AtRequest(kmsg.EndTxn, func(req kmsg.Request) bool {
			end := req.(*kmsg.EndTxnRequest)
			return end.TransactionalID == committed && end.Commit
		}, func() harness.ProxyAction {
			switch point {
			case "first produce":
				armed <- trapAt(kmsg.Produce, harness.Forward)
			case "EndTxn, forwarded":
				armed <- trapAt(kmsg.EndTxn, harness.Forward)
			default:
				armed <- trapAt(kmsg.EndTxn, harness.Drop)
			}
			return harness.Forward
		})
		if !p.Wait(commit, time.Minute) {
			t.Fatalf("kill %d: no commit of %s in a minute", i+1, committed)
		}
		if !p.Wait(<-armed, time.Minute) {
			t.Fatalf("kill %d: no %s of %s in a minute", i+1, point, id)
		}
		// The forwarded produce opens a transaction for the dead router;
		// the forwarded EndTxn commits one.
		want := map[string]string{"first produce": "Ongoing", "EndTxn, forwarded": "CompleteCommit", "EndTxn, dropped": "Ongoing"}[point]
		var after string
		if harness.Poll(10*time.Second, func() bool { after = probe.State(id); return after == want }) != nil {
			t.Errorf("kill %d at %s's %s: its transaction is %s, want %s", i+1, id, point, after, want)
		}
		t.Logf("kill %d at %s's %s: %s's transaction %s at the kill; %s's %s after it", i+1, id, point, committed, before, id, after)
		counts[point]++
		if before == "PrepareCommit" {
			counts["markers pending"]++
		}
		r.Restart()
	}
	t.Logf("broker %s, kills %d %v; %s", e.BrokerName(), kills, counts, tw.finish())
}

// turns is a router of the shared node reached through its proxy, with
// an application committing 1,000 rows/s and a collector reading.
type turns struct {
	t   *testing.T
	e   *harness.Env
	p   *harness.KafkaProxy
	ids []string // the router's transactional ids, in turn
	r   *harness.Router
	col *harness.Collector
	w   *harness.Writer
	l   *harness.Load
}

// startTurns starts the world of a suite of this file, or skips on the
// kfake pass.
func startTurns(t *testing.T, name string) *turns {
	if !harness.OnApache() {
		t.Skipf("runs on the Apache Kafka pass (%s=apache): kfake writes the markers before EndTxn returns", harness.BrokerEnv)
	}
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	tw := &turns{t: t, e: e, p: harness.ProxiedRouter(t, e), ids: harness.RouterTxnIDs(name)}
	tw.r = harness.StartRouter(t, e.Args(name)...)
	tw.col = harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	tw.w = harness.NewWriter(e.DB, rng, "agg", 40, 0)
	tw.l = harness.StartLoad(t, tw.w, 1000)
	return tw
}

// finish stops the load and the router, and checks what the collector
// (franz-go) and kcat read; it says what each found.
func (tw *turns) finish() string {
	v := harness.FinishRun(tw.t, tw.e.DB, tw.l, tw.col, tw.r, 3*time.Minute)
	return fmt.Sprintf("franz-go: %s; kcat: %s", v, kcatVerdict(tw.t, tw.e, tw.w.Types))
}

// txnIDOf is the transactional id of a Produce or EndTxn request, "" for
// others.
func txnIDOf(req kmsg.Request) string {
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		if r.TransactionID != nil {
			return *r.TransactionID
		}
	case *kmsg.EndTxnRequest:
		return r.TransactionalID
	}
	return ""
}

// TestFaultTurnsFencedSecondID fences the router's second transactional
// id (an InitProducerId of its own, as an instance taking over does) while
// the first id's EndTxn is on its way to the broker. The first id's
// transaction commits; the next one, on the fenced id, is refused, and
// the router stops (exit code 1) saying another instance took over.
// Restarted, it resumes after the committed transaction.
func TestFaultTurnsFencedSecondID(t *testing.T) {
	tw := startTurns(t, "turnfence")
	e, p, ids, r, col := tw.e, tw.p, tw.ids, tw.r, tw.col
	fences := harness.ByMode(2, 6)
	for i := range fences {
		col.WaitProgress(t, r, 200, 2*time.Minute, fmt.Sprintf("routing before fence %d", i+1))
		var fenceErr error
		tr := p.AtRequest(kmsg.EndTxn, func(req kmsg.Request) bool {
			end := req.(*kmsg.EndTxnRequest)
			return end.TransactionalID == ids[0] && end.Commit
		}, func() harness.ProxyAction {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			fenceErr = kafka.Fence(ctx, ids[1], kgo.SeedBrokers(e.Kafka.Brokers...))
			return harness.Forward
		})
		if !p.Wait(tr, time.Minute) {
			t.Fatalf("fence %d: no EndTxn of %s in a minute", i+1, ids[0])
		}
		if fenceErr != nil {
			t.Fatalf("fence %d: fencing %s: %v", i+1, ids[1], fenceErr)
		}
		code := r.Wait(time.Minute)
		first := harness.TxnState(t, e.Kafka.Brokers, ids[0])
		t.Logf("fence %d: %s fenced during the EndTxn of %s; the router exited with code %d; %s's transaction %s",
			i+1, ids[1], ids[0], code, ids[0], first)
		if code != 1 {
			t.Errorf("fence %d: exit code %d, want 1 (fenced)", i+1, code)
		}
		if n := r.LogCount("another instance with the same --name took over"); n != i+1 {
			t.Errorf("fence %d: the log says another instance took over %d times, want %d:\n%s", i+1, n, i+1, harness.Tail(r.Out.String(), 10))
		}
		if first != "CompleteCommit" && first != "PrepareCommit" {
			t.Errorf("fence %d: the first id's transaction, whose EndTxn went through, is %s", i+1, first)
		}
		r.Restart()
	}
	t.Logf("broker %s, fences %d; %s", e.BrokerName(), fences, tw.finish())
}

// TestClusterTurnsCoordinatorKill SIGKILLs, on the shared three-node
// cluster, the node that coordinates both of the router's transactional
// ids (the router's name is chosen so), at the first produce of a
// transaction on the second id: that transaction is open, and the one
// before it, on the first id, has committed with its markers still being
// written when the broker says so (PrepareCommit; the kill waits for it,
// up to 50 produces). The cluster moves the coordinator; the new one
// finishes the first transaction's markers, and the second is committed
// or, when the kill ended the router's session, aborted by the next one.
func TestClusterTurnsCoordinatorKill(t *testing.T) {
	rng := harness.FaultRand(t)
	k := harness.SharedCluster3(t)
	a := k.Apache
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	proxies := harness.Cluster3Proxies(t, e)
	probe, err := harness.NewTxnProbe(e.Kafka.Brokers)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()

	name, coord := sharedCoordinatorName(t, e, "turncoord")
	ids := kafka.TransactionalIDs(name, relay.DefaultKafkaTransactions)
	t.Logf("router %s: node %d coordinates %v", name, coord, ids)
	r := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 40, 0)
	l := harness.StartLoad(t, w, 1000)
	col.WaitProgress(t, r, 200, 2*time.Minute, "routing before the kills")

	kills, both := harness.ByMode(1, 4), 0
	for i := range kills {
		coord = txnCoordinator(t, e, ids[0])
		if c := txnCoordinator(t, e, ids[1]); c != coord {
			t.Logf("kill %d: the coordinators moved apart (%d, %d); killing %s's", i+1, coord, c, ids[0])
		}
		node := a.NodeIndex(coord)
		first, second := killAtSecondTxn(t, proxies, probe, ids, func() { a.KillNode(node) })
		killed := time.Now()
		if first == "PrepareCommit" && second == "Ongoing" {
			both++
		}
		what := fmt.Sprintf("SIGKILL of node %d (%s's transaction %s, %s's %s)", coord, ids[0], first, ids[1], second)
		col.WaitProgress(t, r, 200, 2*time.Minute, "routing after the "+what)
		harness.NoteRecovery(t, time.Since(killed))
		t.Logf("kill %d, %s: routing again %s after the kill", i+1, what, time.Since(killed).Round(time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		if err := a.StartNode(ctx, node); err != nil {
			cancel()
			t.Fatal(err)
		}
		if err := harness.WaitFullyReplicated(ctx, e.Kafka.Brokers); err != nil {
			cancel()
			t.Fatal(err)
		}
		cancel()
		col.WaitProgress(t, r, 200, 2*time.Minute, fmt.Sprintf("routing with node %d back", coord))
	}
	sessions := r.LogCount("kafka error; resuming from the committed checkpoint")
	tw := &turns{t: t, e: e, r: r, col: col, w: w, l: l}
	t.Logf("broker %s, kills %d (with one transaction's markers pending and the next open: %d), kafka errors that started a new session %d; %s",
		e.BrokerName(), kills, both, sessions, tw.finish())
	if both == 0 {
		t.Logf("no kill found the first transaction's markers pending: each kill came after they were written")
	}
}

// killAtSecondTxn runs kill at a produce request of ids[1] (so its
// transaction is open) that comes while ids[0]'s transaction is in
// PrepareCommit, looking at up to 50 such requests; at the last one it
// kills whatever the state. It returns the states of the two transactions
// at the kill.
func killAtSecondTxn(t *testing.T, proxies []*harness.KafkaProxy, probe *harness.TxnProbe, ids []string, kill func()) (first, second string) {
	t.Helper()
	for try := 1; ; try++ {
		hit := make(chan struct{})
		var traps []*harness.ProxyTrap
		var fired atomic.Bool
		for _, p := range proxies {
			traps = append(traps, p.AtRequest(kmsg.Produce, func(req kmsg.Request) bool { return txnIDOf(req) == ids[1] }, func() harness.ProxyAction {
				if !fired.CompareAndSwap(false, true) { // another proxy's trap fired first
					return harness.Forward
				}
				first = probe.State(ids[0])
				if first == "PrepareCommit" || try == 50 {
					// The produce goes on: the second transaction opens,
					// and the kill follows at once.
					go func() {
						// Until the broker has added the transaction's
						// partitions, the id still shows its last one.
						deadline := time.Now().Add(time.Second)
						for second = probe.State(ids[1]); second != "Ongoing" && time.Now().Before(deadline); {
							second = probe.State(ids[1])
						}
						kill()
						close(hit)
					}()
					return harness.Forward
				}
				close(hit)
				return harness.Forward
			}))
		}
		select {
		case <-hit:
		case <-time.After(time.Minute):
			t.Fatalf("no produce of %s in a minute", ids[1])
		}
		for i, p := range proxies {
			p.Wait(traps[i], 0)
		}
		if second != "" {
			return first, second
		}
	}
}

// sharedCoordinatorName returns a router name, prefix followed by a
// number, whose transactional ids one node coordinates, and that node.
func sharedCoordinatorName(t *testing.T, e *harness.Env, prefix string) (string, int32) {
	t.Helper()
	for i := range 60 {
		name := fmt.Sprintf("%s%d", prefix, i)
		ids := kafka.TransactionalIDs(name, relay.DefaultKafkaTransactions)
		if c := txnCoordinator(t, e, ids[0]); c == txnCoordinator(t, e, ids[1]) {
			return name, c
		}
	}
	t.Fatalf("no name %s0..59 whose transactional ids share a coordinator", prefix)
	return "", 0
}

package test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
	"github.com/binlog-router/binlog-router/internal/relay"
	"github.com/binlog-router/binlog-router/test/harness"
)

// Rolling restarts of a private three-node Apache Kafka cluster
// (Cluster3Config: replication factor 3, min.insync.replicas=2) under a
// router in exactly-once mode while an application writes, the way
// operators upgrade or reconfigure a cluster: one node at a time, the next
// only once every partition is fully replicated again. Each suite ends
// with what three read_committed readers read, checked by event id:
// franz-go throughout the run (the collector), then librdkafka's kcat and
// Apache Kafka's own Java consumer from the beginning of every topic.

// rollingRecoveryBound is the longest routing may stall after a node is
// stopped or killed, or after it serves again: from the SIGTERM or
// SIGKILL (or from the restarted node answering metadata) until a
// read_committed consumer has read 200 more events. A stopped node hands
// its leaderships over as it shuts down: routing resumed 1 to 6 s after
// the SIGTERM in the runs on the 2-core build machine. A killed node's
// leaderships move only once the controller has missed its heartbeats
// for broker.session.timeout.ms (9 s by default): 9 to 19 s after the
// SIGKILL there, with three JVMs, MariaDB, the router (race detector on)
// and other tests sharing the two cores. The bound is about twice the
// worst of those.
const rollingRecoveryBound = 40 * time.Second

// rolling is one rolling suite's world: the private cluster, the router
// under load, a collector reading what it publishes, and the counts of
// what moved.
type rolling struct {
	t      *testing.T
	rng    *rand.Rand
	a      *devenv.ApacheKafka
	e      *harness.Env
	txnIDs []string
	types  []string // event types, so topics prefix.type
	r      *harness.Router
	col    *harness.Collector
	l      *harness.Load
	cl     *kgo.Client

	restarts         int
	controllerMoves  int
	coordinatorMoves int
	worstDown        time.Duration // longest graceful stop
}

// startRolling starts the private cluster, a router named name in
// exactly-once mode and a load of rate rows per second of types (Created
// and Changed when none), and returns once the router routes.
func startRolling(t *testing.T, name string, rate int, types ...string) *rolling {
	t.Helper()
	k := harness.PrivateApache(t, harness.Cluster3Config())
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	w := harness.NewWriter(e.DB, rng, "agg", 40, 0, types...)
	rg := &rolling{t: t, rng: rng, a: k.Apache, e: e, txnIDs: harness.RouterTxnIDs(name), types: w.Types, cl: e.KafkaClient()}
	rg.r = harness.StartRouter(t, e.Args(name, "--delivery", string(relay.ExactlyOnce))...)
	rg.col = harness.NewCollector(t, k.Brokers, e.TopicRegex())
	rg.l = harness.StartLoad(t, w, rate)
	rg.col.WaitProgress(t, rg.r, 200, 2*time.Minute, "routing before the restarts")
	return rg
}

// restart stops node i (SIGTERM, or SIGKILL when kill is set), waits
// until the router routes again without it, starts it again, waits until
// the router routes again and every partition is fully replicated. It
// logs and records both recovery times, and counts whether the active
// controller and the router's transaction coordinator moved away from
// the node.
func (rg *rolling) restart(i int, kill bool) {
	t := rg.t
	t.Helper()
	rg.restarts++
	id := rg.a.NodeID(i)
	ctrl, coord := rg.controller(), txnCoordinator(t, rg.e, rg.txnIDs[0])
	how := "stopped (SIGTERM)"
	if kill {
		how = "killed (SIGKILL)"
	}
	what := fmt.Sprintf("restart %d: node %d %s, controller %d, coordinator %d", rg.restarts, id, how, ctrl, coord)
	began := time.Now()
	if kill {
		rg.a.KillNode(i)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := rg.a.StopNode(ctx, i)
		cancel()
		require.NoError(t, err, what)
		rg.worstDown = max(rg.worstDown, time.Since(began))
	}
	rg.progress(what, began)
	newCtrl, newCoord := rg.controller(), txnCoordinator(t, rg.e, rg.txnIDs[0])
	if newCtrl != ctrl {
		rg.controllerMoves++
	}
	if newCoord != coord {
		rg.coordinatorMoves++
	}
	if newCoord == id {
		t.Errorf("%s: node %d still named the router's transaction coordinator while it is down", what, id)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	starting := time.Now()
	require.NoError(t, rg.a.StartNode(ctx, i), what)
	serving := time.Now()
	rg.progress(fmt.Sprintf("restart %d: node %d back", rg.restarts, id), serving)
	require.NoError(t, harness.WaitFullyReplicated(ctx, rg.e.Kafka.Brokers), what)
	t.Logf("restart %d: node %d served %s after it was started, every partition in sync %s later (controller %d, coordinator %d)",
		rg.restarts, id, serving.Sub(starting).Round(time.Millisecond), time.Since(serving).Round(time.Millisecond), newCtrl, newCoord)
}

// progress waits, up to rollingRecoveryBound, until a read_committed
// consumer has read 200 more events, and records the time since since.
func (rg *rolling) progress(what string, since time.Time) {
	rg.t.Helper()
	rg.col.WaitProgress(rg.t, rg.r, 200, rollingRecoveryBound, what)
	d := time.Since(since)
	harness.NoteRecovery(rg.t, d)
	rg.t.Logf("%s: routing again %s after it began", what, d.Round(time.Millisecond))
}

// controller is the node id of the active controller, the leader of the
// KRaft metadata quorum (DescribeQuorum, which a broker forwards to the
// controllers).
func (rg *rolling) controller() int32 {
	rg.t.Helper()
	leader := int32(-1)
	harness.Eventually(rg.t, 30*time.Second, "the active controller", func() bool {
		req := kmsg.NewPtrDescribeQuorumRequest()
		topic := kmsg.NewDescribeQuorumRequestTopic()
		topic.Topic = "__cluster_metadata"
		topic.Partitions = append(topic.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
		req.Topics = append(req.Topics, topic)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, rg.cl)
		if err != nil || resp.ErrorCode != 0 || len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
			return false
		}
		p := resp.Topics[0].Partitions[0]
		leader = p.LeaderID
		return p.ErrorCode == 0 && leader >= 0
	})
	return leader
}

// finish stops the load and the router, checks what the collector read
// (FinishRun), then reads every outbox topic from its beginning with kcat
// and with the Java consumer and checks each by event id the same way.
// It returns the collector's verdict.
func (rg *rolling) finish() harness.Verdict {
	t := rg.t
	t.Helper()
	v := harness.FinishRun(t, rg.e.DB, rg.l, rg.col, rg.r, 3*time.Minute)
	start := time.Now()
	kcat := kcatVerdict(t, rg.e, rg.types)
	t.Logf("kcat (read_committed, %s): %s", time.Since(start).Round(time.Millisecond), kcat)
	want := harness.CommittedRows(t, rg.e.DB)
	start = time.Now()
	java := harness.CheckDelivery(t, want, readerDelivered(t, readJava(t, rg.e.Kafka.Brokers, rg.e.TopicRegex())), nil)
	t.Logf("the Java consumer (read_committed, %s): %s", time.Since(start).Round(time.Millisecond), java)
	t.Logf("franz-go (read_committed, throughout): %s", v)
	t.Logf("broker %s, restarts %d, the active controller moved %d times, the router's transaction coordinator %d times, "+
		"longest graceful stop %s, kafka errors that started a new session %d",
		rg.e.BrokerName(), rg.restarts, rg.controllerMoves, rg.coordinatorMoves, rg.worstDown.Round(time.Millisecond),
		rg.r.LogCount("kafka error; resuming from the committed checkpoint"))
	return v
}

// readerDelivered turns what another client read into the collector's
// records, in partition order: event id and GTID from the headers, the
// sequence number from the value.
func readerDelivered(t testing.TB, recs []refRecord) []harness.Delivered {
	t.Helper()
	slices.SortStableFunc(recs, func(a, b refRecord) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	out := make([]harness.Delivered, len(recs))
	for i, r := range recs {
		d := harness.Delivered{Topic: r.Topic, Key: string(r.Key), Partition: r.Partition, Offset: r.Offset}
		for _, h := range r.Headers {
			switch string(h[0]) {
			case "id":
				d.ID = string(h[1])
			case "binlog_gtid":
				d.GTID = string(h[1])
			}
		}
		var p struct{ Seq int }
		if err := json.Unmarshal(r.Value, &p); err != nil {
			t.Errorf("record %s/%d@%d: value %.80q: %v", r.Topic, r.Partition, r.Offset, r.Value, err)
		}
		d.Seq = p.Seq
		out[i] = d
	}
	return out
}

// TestFaultRollingRestart stops each node of the cluster gracefully and
// starts it again, one after another in a random order, for three full
// rounds, while rows are written at 1,000 per second: the active
// controller and the router's transaction coordinator move with the
// nodes. The router keeps running, routes again within
// rollingRecoveryBound after each stop and each return, and franz-go,
// kcat and the Java consumer each read every committed row exactly once.
func TestFaultRollingRestart(t *testing.T) {
	const rounds = 3
	rg := startRolling(t, "rolling", 1000)
	for range rounds {
		for _, i := range rg.rng.Perm(3) {
			rg.restart(i, false)
		}
	}
	rg.finish()
	// Each round stops the node that is the active controller and the one
	// that is the coordinator at that moment.
	assert.GreaterOrEqual(t, rg.controllerMoves, rounds, "moves of the active controller")
	assert.GreaterOrEqual(t, rg.coordinatorMoves, rounds, "moves of the router's transaction coordinator")
}

// TestFaultRollingKillCoordinator SIGKILLs, ten times, the node that
// leads the transaction coordinator's partition for the router's
// transactional id, while the router's transaction is open (if it opens
// within a few seconds) and rows are written at 1,000 per second, and
// starts it again each time. The router keeps running, routes again
// within rollingRecoveryBound, and franz-go, kcat and the Java consumer
// each read every committed row exactly once.
func TestFaultRollingKillCoordinator(t *testing.T) {
	const kills = 10
	rg := startRolling(t, "rollkill", 1000)
	probe, err := harness.NewTxnProbe(rg.e.Kafka.Brokers, rg.txnIDs...)
	require.NoError(t, err)
	defer probe.Close()
	open := 0
	for range kills {
		i := rg.a.NodeIndex(txnCoordinator(t, rg.e, rg.txnIDs[0]))
		require.GreaterOrEqual(t, i, 0)
		time.Sleep(harness.RandDur(rg.rng, 100*time.Millisecond, 700*time.Millisecond))
		if harness.Poll(5*time.Second, probe.Ongoing) == nil {
			open++
		}
		rg.restart(i, true)
	}
	rg.finish()
	t.Logf("kills %d, %d of them with the router's transaction open", kills, open)
	assert.Equal(t, kills, rg.coordinatorMoves, "each kill moves the router's transaction coordinator")
}

// TestFaultRollingInbox runs an inbox consumer behind the router through
// one round of graceful rolling restarts (the consumer group's
// coordinator moves too): the ledger it writes holds every event's side
// effect exactly once, and the router's records were each read once.
func TestFaultRollingInbox(t *testing.T) {
	rg := startRolling(t, "rollinbox", 300, "Paid")
	l := newLedgerInbox(t, rg.e)
	c := l.start(t, rg.e, inboxtest.Unique("billing"))
	harness.Eventually(t, 2*time.Minute, "the inbox consumer applying events", func() bool { return c.Stats().Processed >= 200 })
	for _, i := range rg.rng.Perm(3) {
		rg.restart(i, false)
	}
	v := rg.finish()
	n := int64(v.Events)
	harness.Eventually(t, 2*time.Minute, fmt.Sprintf("the inbox consumer applying all %d events", n), func() bool {
		return c.Stats().Processed >= n
	})
	if err := c.Stop(t); err != nil {
		t.Fatalf("the inbox consumer stopped with: %v", err)
	}
	st := c.Stats()
	t.Logf("inbox consumer: %+v", st)
	assert.Equal(t, n, st.Processed, "events applied")
	assert.Zero(t, st.DeadLetters, "dead letters")
	l.check(t, int(n), 0) // the load's payloads carry no amount: one ledger row per event
}

package test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// Tests only a real cluster can run, on the shared three-node cluster
// (replication factor 3, min.insync.replicas=2).

// TestClusterKillLeaderAndCoordinator SIGKILLs, while rows flow, the
// broker that leads the checkpoint partition, and once it is back and
// every partition is in sync again, the broker that is the router's
// transaction coordinator. The cluster moves the leaderships (after the
// controller misses the dead broker's heartbeats); the router keeps
// running, and a read_committed consumer reads every row exactly once.
func TestClusterKillLeaderAndCoordinator(t *testing.T) {
	rng := harness.FaultRand(t)
	k := harness.SharedCluster3(t)
	a := k.Apache
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	const name = "leaderkill"
	txnIDs := harness.RouterTxnIDs(name)
	r := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 40, 0), 400)
	col.WaitProgress(t, r, 200, 2*time.Minute, "routing before the kills")

	for _, victim := range []struct {
		what string
		node func() int32
	}{
		{"the leader of the checkpoint partition", func() int32 { return partitionLeader(t, e, e.CheckpointTopic(), 0) }},
		{"the router's transaction coordinator", func() int32 { return txnCoordinator(t, e, txnIDs[0]) }},
	} {
		id := victim.node()
		i := a.NodeIndex(id)
		require.GreaterOrEqual(t, i, 0, "node id %d", id)
		time.Sleep(harness.RandDur(rng, 100*time.Millisecond, 700*time.Millisecond))
		// Kill while the router's transaction is open, if it opens within a
		// few seconds (it is open most of the time under this load).
		var state string
		_ = harness.Poll(5*time.Second, func() bool {
			state = harness.TxnState(t, e.Kafka.Brokers, txnIDs...)
			return state == "Ongoing"
		})
		killed := time.Now()
		a.KillNode(i)
		what := fmt.Sprintf("SIGKILL of node %d, %s (router's transaction %s)", id, victim.what, state)
		col.WaitProgress(t, r, 200, 2*time.Minute, "routing after the "+what)
		harness.NoteRecovery(t, time.Since(killed))
		t.Logf("%s: routing again %s after the kill", what, time.Since(killed).Round(time.Millisecond))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		require.NoError(t, a.StartNode(ctx, i))
		require.NoError(t, harness.WaitFullyReplicated(ctx, e.Kafka.Brokers))
		cancel()
		t.Logf("node %d back and every partition in sync %s after the kill", id, time.Since(killed).Round(time.Millisecond))
		col.WaitProgress(t, r, 200, 2*time.Minute, "routing with node "+fmt.Sprint(id)+" back")
	}
	v := harness.FinishRun(t, e.DB, l, col, r, 3*time.Minute)
	t.Logf("broker %s, kills 2, kafka errors that started a new session %d, %s",
		e.BrokerName(), r.LogCount("kafka error; resuming from the committed checkpoint"), v)
}

// TestClusterBelowMinInsyncReplicas stops one of the three brokers while
// the outbox topics require min.insync.replicas=3: their partitions have
// two in-sync replicas, and the brokers refuse acks=all writes with
// NOT_ENOUGH_REPLICAS (a producer of the test's own sees it). The router
// keeps running and waits, names the partitions and the setting in its
// log, in /readyz and in binlog_router_kafka_partitions_refusing_writes,
// and publishes nothing meanwhile; when the broker is back it resumes,
// says so, and a read_committed consumer reads every row exactly once.
func TestClusterBelowMinInsyncReplicas(t *testing.T) {
	rng := harness.FaultRand(t)
	k := harness.SharedCluster3(t)
	a := k.Apache
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	topics := []string{e.Prefix + ".Created", e.Prefix + ".Changed"}
	adm := e.Admin()
	three := "3"
	created, err := adm.CreateTopics(context.Background(), 3, 3, map[string]*string{"min.insync.replicas": &three}, topics...)
	require.NoError(t, err)
	require.NoError(t, created.Error())

	const name = "minisr"
	r := harness.StartRouter(t, e.Args(name, "--metrics-addr", "127.0.0.1:0")...)
	base := "http://" + metricsAddr(t, r)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 40, 0), 300)
	col.WaitProgress(t, r, 200, 2*time.Minute, "routing before the broker stops")
	harness.Eventually(t, 30*time.Second, "/readyz ready", func() bool { return readyz(t, base) == http.StatusOK })

	const node = 2
	stopped := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	require.NoError(t, a.StopNode(ctx, node))
	cancel()
	var produceErr error
	harness.Eventually(t, 30*time.Second, "the brokers refusing acks=all writes", func() bool {
		produceErr = produceOnce(e, topics[0])
		return errors.Is(produceErr, kerr.NotEnoughReplicas)
	})
	t.Logf("node %d stopped; a producer of the test's own: %v", a.NodeID(node), produceErr)

	var body string
	harness.Eventually(t, 30*time.Second, "the router reporting the partitions", func() bool {
		var code int
		code, body = getURL(t, base+"/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "NOT_ENOUGH_REPLICAS") &&
			r.LogCount("kafka refuses writes to partitions the router writes to") > 0
	})
	t.Logf("/readyz: %s", strings.TrimSpace(body))
	assert.Contains(t, body, "min.insync.replicas=3")
	assert.Regexp(t, regexp.MustCompile(regexp.QuoteMeta(e.Prefix)+`\.(Created|Changed)/\d has 2 in-sync replica\(s\)`), body)
	gauge := metricValue(t, base, `binlog_router_kafka_partitions_refusing_writes{reason="below_min_insync_replicas"}`)
	assert.Equal(t, 6.0, gauge, "both outbox topics' three partitions")
	assert.Contains(t, r.Out.String(), "min.insync.replicas")

	held := col.Count()
	time.Sleep(3 * time.Second) // nothing may become visible while the writes are refused
	assert.Equal(t, held, col.Count(), "records published while the brokers refused writes")
	r.MustRun("while the brokers refuse writes")
	time.Sleep(time.Until(stopped.Add(15 * time.Second))) // the outage itself: 15 s
	r.MustRun("after 15 s of refused writes")
	down := time.Since(stopped)

	ctx, cancel = context.WithTimeout(context.Background(), 3*time.Minute)
	require.NoError(t, a.StartNode(ctx, node))
	require.NoError(t, harness.WaitFullyReplicated(ctx, e.Kafka.Brokers))
	cancel()
	col.WaitProgress(t, r, 200, 2*time.Minute, "routing with the broker back")
	harness.Eventually(t, 30*time.Second, "/readyz ready again", func() bool { return readyz(t, base) == http.StatusOK })
	harness.Eventually(t, 30*time.Second, "the log saying writes are accepted again", func() bool {
		return r.LogCount("kafka accepts writes again") > 0
	})
	assert.Equal(t, 0.0, metricValue(t, base, `binlog_router_kafka_partitions_refusing_writes{reason="below_min_insync_replicas"}`))
	v := harness.FinishRun(t, e.DB, l, col, r, 3*time.Minute)
	t.Logf("broker %s, writes refused for %s (node %d down), kafka errors that started a new session %d, %s",
		e.BrokerName(), down.Round(time.Millisecond), a.NodeID(node), r.LogCount("kafka error; resuming from the committed checkpoint"), v)
}

// partitionLeader is the node id leading topic/partition.
func partitionLeader(t testing.TB, e *harness.Env, topic string, partition int32) int32 {
	t.Helper()
	adm := e.Admin()
	var leader int32 = -1
	harness.Eventually(t, 30*time.Second, "a leader for "+topic, func() bool {
		td, err := adm.ListTopics(context.Background(), topic)
		if err != nil || td[topic].Err != nil {
			return false
		}
		leader = td[topic].Partitions[partition].Leader
		return leader >= 0
	})
	return leader
}

// txnCoordinator is the node id coordinating transactional id.
func txnCoordinator(t testing.TB, e *harness.Env, id string) int32 {
	t.Helper()
	adm := e.Admin()
	var node int32 = -1
	harness.Eventually(t, 30*time.Second, "the coordinator of "+id, func() bool {
		c := adm.FindTxnCoordinators(context.Background(), id)[id]
		node = c.NodeID
		return c.Err == nil && node >= 0
	})
	return node
}

// produceOnce produces one record with acks=all and no retry, and
// returns the broker's answer.
func produceOnce(e *harness.Env, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka.Brokers...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(), kgo.RecordRetries(0), kgo.RecordDeliveryTimeout(10*time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("probe"), Value: []byte(`{}`)}).FirstErr()
}

// metricsAddr is the address the router serves /metrics on (its log
// names it; --metrics-addr 127.0.0.1:0 picks a free port).
func metricsAddr(t testing.TB, r *harness.Router) string {
	t.Helper()
	re := regexp.MustCompile(`"metrics_addr":"([^"]+)"`)
	var addr string
	harness.Eventually(t, 30*time.Second, "the router's metrics address", func() bool {
		if m := re.FindStringSubmatch(r.Out.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return addr
}

func getURL(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func readyz(t testing.TB, base string) int {
	code, _ := getURL(t, base+"/readyz")
	return code
}

// metricValue is the value of one sample line of /metrics, named with
// its labels as the exposition prints them.
func metricValue(t testing.TB, base, sample string) float64 {
	t.Helper()
	_, body := getURL(t, base+"/metrics")
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, sample+" "); ok {
			var v float64
			_, err := fmt.Sscan(rest, &v)
			require.NoError(t, err, line)
			return v
		}
	}
	t.Fatalf("no sample %s in /metrics", sample)
	return 0
}

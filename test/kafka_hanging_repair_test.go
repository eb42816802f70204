package test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestRouterRepairsHangingCommit: the router completes its own committed
// transaction that Apache Kafka left open on its partitions
// (KAFKA-20734, docs/kafka-issues.md). On a private three-node cluster,
// the checkpoint topic and an outbox topic have their only replica on
// node B, another node than the transaction coordinator of the router's
// first transactional id. A bare franz-go producer with that id writes,
// in one transaction, an outbox record (with its id header, as the
// router's) and the router's checkpoint at the MariaDB position after two
// rows; B is stopped gracefully, the transaction is committed (the
// coordinator completes it without markers), and B is started again: both
// partitions keep the transaction open. Two more rows are inserted, and
// the router starts from that checkpoint topic. It must log the repair,
// resume from that checkpoint, and a read_committed consumer must read the
// bare producer's record and the two later rows exactly once each, and
// neither of the two rows before the checkpoint. It runs on a cluster
// formatted with transaction.version 2 (the default: the coordinator's
// epoch is one past the transaction's records) and with 0 (the same
// epoch).
func TestRouterRepairsHangingCommit(t *testing.T) {
	for _, tv := range []int16{2, 0} {
		t.Run(fmt.Sprintf("transaction.version=%d", tv), func(t *testing.T) {
			k := harness.PrivateApache(t, devenv.ApacheKafkaConfig{Nodes: 3, FormatArgs: []string{"--feature", fmt.Sprintf("transaction.version=%d", tv)}})
			repairsHangingCommit(t, k, tv)
		})
	}
}

// repairsHangingCommit is one run of TestRouterRepairsHangingCommit on
// k, whose transaction.version is tv.
func repairsHangingCommit(t *testing.T, k *devenv.Kafka, tv int16) {
	if !kafkaDropsLeaderlessMarkers(k.Apache.Version()) {
		t.Skipf("apache kafka %s writes the markers of leaderless partitions once they have a leader again: nothing hangs", k.Apache.Version())
	}
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	h := &hangingCluster{k: k.Apache, cl: harness.KafkaClient(t, k.Brokers, kgo.MetadataMinAge(100*time.Millisecond))}
	h.adm = kadm.NewClient(h.cl)

	const name = "repair"
	txnID := kafka.TransactionalID(name)
	cpTopic, outTopic := e.CheckpointTopic(), e.Prefix+".created"
	coord := h.coordinator(ctx, t, txnID)
	b := (k.Apache.NodeIndex(coord) + 1) % 3
	bID := k.Apache.NodeID(b)
	t.Logf("transaction coordinator of %s: node %d; %s/0 and %s/0 on node %d", txnID, coord, cpTopic, outTopic, bID)
	for _, topic := range []string{cpTopic, outTopic} {
		h.createOn(ctx, t, topic, bID)
		h.waitLeader(ctx, t, coord, topic, bID)
	}
	compact := "compact"
	_, err := h.adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: &compact}}, cpTopic)
	require.NoError(t, err, "making %s compacted", cpTopic)

	before := []harness.Event{harness.NewEvent("1", "created", `{"n":"before-1"}`), harness.NewEvent("2", "created", `{"n":"before-2"}`)}
	for _, ev := range before {
		e.InsertTx(ev)
	}
	var gtids string
	var serverID uint32
	require.NoError(t, e.DB.QueryRow("SELECT @@gtid_binlog_pos, @@server_id").Scan(&gtids, &serverID))

	// The hanging transaction, written as the router writes one.
	bare := uuid.NewString()
	cpRec, err := (&checkpoint.Checkpoint{Name: name, GTIDSet: gtids, Flavor: "mariadb", ServerID: serverID, Time: time.Now().UTC()}).Record(cpTopic)
	require.NoError(t, err)
	cpRec.Partition = 0
	p, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.TransactionalID(txnID), kgo.TransactionTimeout(60*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MetadataMinAge(100*time.Millisecond))
	require.NoError(t, err)
	defer p.Close()
	require.NoError(t, p.BeginTransaction())
	out := &kgo.Record{Topic: outTopic, Partition: 0, Key: []byte("0"), Value: []byte(`{"bare":true}`), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(bare)}}}
	require.NoError(t, p.ProduceSync(ctx, out, cpRec).FirstErr(), "producing the transaction's records")
	pid, epoch, err := p.ProducerID(ctx)
	require.NoError(t, err)
	t.Logf("outbox record at %s/0@%d, checkpoint %s at %s/0@%d (producer id %d epoch %d); stopping node %d gracefully",
		outTopic, out.Offset, gtids, cpTopic, cpRec.Offset, pid, epoch, bID)

	stopCtx, stopCancel := context.WithTimeout(ctx, 2*time.Minute)
	require.NoError(t, k.Apache.StopNode(stopCtx, b))
	stopCancel()
	h.waitLeader(ctx, t, coord, cpTopic, -1)
	h.waitLeader(ctx, t, coord, outTopic, -1)
	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	require.NoError(t, p.EndTransaction(cctx, kgo.TryCommit), "EndTxn(commit) with the partitions leaderless")
	ccancel()
	p.Close()
	startCtx, startCancel := context.WithTimeout(ctx, 3*time.Minute)
	require.NoError(t, k.Apache.StartNode(startCtx, b))
	require.NoError(t, k.Apache.WaitBrokers(startCtx, 3))
	startCancel()
	h.waitLeader(ctx, t, coord, cpTopic, bID)
	h.waitLeader(ctx, t, coord, outTopic, bID)

	// It hangs: the coordinator completed the commit, the partitions
	// keep the transaction open.
	open, txn := h.describe(ctx, t, txnID, cpTopic)
	require.Equal(t, "CompleteCommit", txn.State, "the coordinator completed the commit")
	require.Equal(t, epoch+map[bool]int16{true: 1, false: 0}[tv >= 2], txn.ProducerEpoch, "the coordinator's epoch under transaction.version %d", tv)
	require.Len(t, open, 1, "the transaction is open on %s/0", cpTopic)
	require.Equal(t, pid, open[0].ProducerID)
	require.Equal(t, epoch, open[0].ProducerEpoch)
	for _, topic := range []string{cpTopic, outTopic} {
		var stable, end int64 = -1, -1
		h.offsets(ctx, topic, &stable, &end)
		require.Less(t, stable, end, "%s/0 is stable only below its high watermark: the transaction hangs", topic)
	}

	after := []harness.Event{harness.NewEvent("3", "created", `{"n":"after-1"}`), harness.NewEvent("4", "created", `{"n":"after-2"}`)}
	for _, ev := range after {
		e.InsertTx(ev)
	}
	began := time.Now()
	r := harness.StartRouter(t, e.Args(name, "--metrics-addr", "127.0.0.1:0")...)
	defer r.Stop(30 * time.Second)
	base := "http://" + metricsAddr(t, r)
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	require.NoError(t, r.WaitLog(wctx, "KAFKA-20734"), "the router repairs the hanging transaction:\n%s", harness.Tail(r.Out.String(), 30))
	repair := r.LogLine("KAFKA-20734")
	t.Logf("router after %s: %s", time.Since(began).Round(time.Millisecond), repair)
	for _, want := range []string{`"level":"warn"`, `"outcome":"commit"`, fmt.Sprintf(`"producer_id":%d`, pid), fmt.Sprintf(`"producer_epoch":%d`, epoch), cpTopic + "/0", outTopic + "/0"} {
		assert.Contains(t, repair, want)
	}
	require.NoError(t, r.WaitLog(wctx, "resuming from checkpoint"), harness.Tail(r.Out.String(), 30))
	assert.Contains(t, r.LogLine("resuming from checkpoint"), fmt.Sprintf(`"gtid_set":"%s"`, gtids), "the router resumes from the repaired checkpoint")

	c := harness.NewConsumer(t, k.Brokers, harness.ExactTopic(outTopic))
	want := []string{bare, after[0].ID, after[1].ID}
	got := c.ReadIDsUntil(func(ids []string) bool { return len(ids) >= len(want) }, 60*time.Second)
	got = append(got, harness.RecordIDs(c.Quiet(3*time.Second))...)
	assert.Equal(t, want, got, "read_committed: the repaired transaction's record, then the rows after its checkpoint, once each")
	for _, ev := range before {
		assert.False(t, slices.Contains(got, ev.ID), "row %s before the checkpoint is not published again", ev.ID)
	}
	assert.Equal(t, 1, strings.Count(r.Out.String(), `"kafka_issue":"KAFKA-20734"`), "one repair")
	assert.Equal(t, 1.0, metricValue(t, base, `binlog_router_kafka_hanging_transactions_repaired_total{outcome="commit"}`), "one repair counted")
	assert.Equal(t, 0.0, metricValue(t, base, `binlog_router_kafka_hanging_transactions_repaired_total{outcome="abort"}`))
}

package test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// hangingWatch is how long the test watches the partition after its node
// is back for the transaction's marker.
const hangingWatch = 60 * time.Second

// hangingLogLine is what Apache Kafka's transaction coordinator logs when
// it drops a partition's markers because it found no leader endpoint for
// it (TransactionMarkerChannelManager).
const hangingLogLine = "likely deleted already"

// TestKafkaHangingMarkerAfterLeaderStop reproduces, without the router,
// Apache Kafka's hanging transaction after a graceful stop (KAFKA-20734,
// docs/kafka-issues.md). On a private three-node cluster (three KRaft
// voters, so the quorum survives a stopped node, which two combined nodes
// would not), a transaction writes one acknowledged record to a partition
// whose only replica is on node B, while the transaction coordinator is on
// another node A; B is stopped gracefully (the partition's leader becomes
// -1), the transaction is committed (EndTxn succeeds), and B is started
// again. The coordinator of Kafka 4.3 and later finds no leader endpoint
// for the partition, takes it for deleted, completes the commit without
// writing its marker, and the record is never readable by read_committed
// consumers: the partition's last stable offset stays at the record,
// DescribeProducers shows the transaction open at the producer's old
// epoch, DescribeTransactions shows the id CompleteCommit without the
// partition, and `kafka-transactions.sh find-hanging` names it. It runs
// once with a bare franz-go transactional producer and once with Apache
// Kafka's Java producer (test/javaref/HangingMarker.java).
//
// Each run then writes the COMMIT marker itself with WriteTxnMarkers, as
// `kafka-transactions.sh abort` writes an ABORT one (the producer id,
// epoch and coordinator epoch DescribeProducers reports), and requires the
// record to become readable: the repair docs/kafka-issues.md describes.
//
// The outcome expected is the version's: a hang on 4.3 and later, the
// marker once the node is back before 4.3 (the coordinator then queued
// the markers of a leaderless partition until it had a leader again). A
// release that behaves otherwise fails the test, so that
// docs/kafka-issues.md is corrected (the release that fixed it) rather
// than go stale. It takes about three minutes, so it is not part of `make
// test`: `make test-kafka-issues` runs it.
func TestKafkaHangingMarkerAfterLeaderStop(t *testing.T) {
	k := harness.PrivateApache(t, devenv.ApacheKafkaConfig{Nodes: 3})
	h := &hangingCluster{k: k.Apache, cl: harness.KafkaClient(t, k.Brokers, kgo.MetadataMinAge(100*time.Millisecond))}
	h.adm = kadm.NewClient(h.cl)
	hangs := kafkaDropsLeaderlessMarkers(k.Apache.Version())
	t.Logf("apache kafka %s, 3 nodes: a hang is %s", k.Apache.Version(), map[bool]string{true: "expected", false: "not expected"}[hangs])

	t.Run("franz-go", func(t *testing.T) {
		h.run(t, &franzTxn{brokers: k.Brokers}, "hanging-franz", "hanging_franz", hangs)
	})
	t.Run("java", func(t *testing.T) {
		h.run(t, &javaTxn{t: t, bootstrap: strings.Join(k.Brokers, ",")}, "hanging-java", "hanging_java", hangs)
	})
}

// kafkaDropsLeaderlessMarkers reports whether Apache Kafka version drops
// the markers of a partition without a leader: 4.3 and later, where the
// broker's metadata cache is the Java one of KAFKA-17573
// (org.apache.kafka.metadata.KRaftMetadataCache), which answers no
// endpoint for a leader of -1. Run here: 4.1.0 and 4.2.0 (Scala cache)
// write the marker once the node is back; 4.3.0 and 4.4.0 hang.
func kafkaDropsLeaderlessMarkers(version string) bool {
	f := strings.SplitN(version, ".", 3)
	if len(f) < 2 {
		return true
	}
	major, _ := strconv.Atoi(f[0])
	minor, _ := strconv.Atoi(f[1])
	return major > 4 || major == 4 && minor >= 3
}

// twoStepTxn is a transactional producer whose one transaction is driven
// in two steps, so the test can stop a node in between.
type twoStepTxn interface {
	// begin initialises transactional id txnID, begins a transaction and
	// produces one record (value) to topic's partition 0, returning its
	// offset once Kafka has acknowledged it.
	begin(ctx context.Context, txnID, topic, value string) (int64, error)
	// commit commits the transaction and returns EndTxn's answer.
	commit(ctx context.Context) error
	// producer is the producer id and epoch of the transaction's records,
	// or -1 and -1 when the client does not say.
	producer() (int64, int16)
	// close ends the producer.
	close()
}

// hangingCluster is the three-node cluster the runs share.
type hangingCluster struct {
	k   *devenv.ApacheKafka
	cl  *kgo.Client
	adm *kadm.Client
}

// hangingOutcome is what one run saw.
type hangingOutcome struct {
	offset         int64         // the record's offset
	commitErr      error         // EndTxn's answer
	commitTook     time.Duration // how long EndTxn took
	readAfter      time.Duration // when the record became readable after the node was back; -1 never
	stable, end    int64         // the partition's last stable offset and high watermark at the end
	open           []kadm.DescribedProducer
	txn            kadm.DescribedTransaction
	coordinatorLog []string // the coordinator's hangingLogLine lines naming the partition
}

// run is one reproduction with txn on a new topic, then the repair.
func (h *hangingCluster) run(t *testing.T, txn twoStepTxn, txnID, topic string, hangs bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	defer txn.close()
	coord := h.coordinator(ctx, t, txnID)
	a := h.k.NodeIndex(coord)
	b := (a + 1) % 3
	bID := h.k.NodeID(b)
	t.Logf("transaction coordinator of %s: node %d; %s/0's only replica: node %d", txnID, coord, topic, bID)
	h.createOn(ctx, t, topic, bID)
	h.waitLeader(ctx, t, coord, topic, bID)

	var o hangingOutcome
	value := "committed-by-" + txnID
	var err error
	o.offset, err = txn.begin(ctx, txnID, topic, value)
	require.NoError(t, err, "producing the transaction's record")
	pid, epoch := txn.producer()
	t.Logf("record acknowledged at %s/0@%d (producer id %d epoch %d); stopping node %d gracefully", topic, o.offset, pid, epoch, bID)

	stopCtx, stopCancel := context.WithTimeout(ctx, 2*time.Minute)
	require.NoError(t, h.k.StopNode(stopCtx, b))
	stopCancel()
	h.waitLeader(ctx, t, coord, topic, -1)
	began := time.Now()
	o.commitErr = txn.commit(ctx)
	o.commitTook = time.Since(began)
	t.Logf("commit with %s/0 leaderless: %v after %s", topic, errOrOK(o.commitErr), o.commitTook.Round(time.Millisecond))

	startCtx, startCancel := context.WithTimeout(ctx, 3*time.Minute)
	require.NoError(t, h.k.StartNode(startCtx, b))
	require.NoError(t, h.k.WaitBrokers(startCtx, 3))
	startCancel()
	h.waitLeader(ctx, t, coord, topic, bID)
	t.Logf("node %d is back and leads %s/0; watching for the marker for %s", bID, topic, hangingWatch)

	o.readAfter = h.watch(ctx, t, topic, value, o.offset, hangingWatch, &o.stable, &o.end)
	o.open, o.txn = h.describe(ctx, t, txnID, topic)
	o.coordinatorLog = h.logLines(a, hangingLogLine, topic+"-0")
	for _, l := range o.coordinatorLog {
		t.Logf("node %d's log: %s", coord, l)
	}

	require.NoError(t, o.commitErr, "EndTxn(commit) with the partition leaderless: Kafka accepts it (the coordinator answers once PrepareCommit is written)")
	if !hangs {
		require.GreaterOrEqual(t, o.readAfter, time.Duration(0),
			"apache kafka %s never wrote the marker of the committed transaction on %s/0 (stable up to %d of %d): it drops markers of leaderless partitions; "+
				"add the release to kafkaDropsLeaderlessMarkers and docs/kafka-issues.md", h.k.Version(), topic, o.stable, o.end)
		assert.Empty(t, o.open, "DescribeProducers shows no transaction open on %s/0 once the marker is written", topic)
		t.Logf("not reproduced, as expected of apache kafka %s: the marker was written %s after node %d came back", h.k.Version(), o.readAfter.Round(time.Millisecond), bID)
		return
	}
	if o.readAfter >= 0 {
		t.Fatalf("not reproduced: apache kafka %s wrote the marker %s after node %d came back (the record is readable read_committed); "+
			"if this release fixed KAFKA-20734, say so in kafkaDropsLeaderlessMarkers and docs/kafka-issues.md", h.k.Version(), o.readAfter.Round(time.Millisecond), bID)
	}
	t.Logf("reproduced (KAFKA-20734, apache/kafka#22680): no read_committed consumer read the committed record in %s; %s/0 stable up to %d of %d",
		hangingWatch, topic, o.stable, o.end)
	assert.Equal(t, o.offset, o.stable, "the last stable offset stays at the committed record")
	assert.Equal(t, o.offset+1, o.end, "the high watermark is one past the record: no marker")
	require.Len(t, o.open, 1, "DescribeProducers shows the transaction open")
	open := o.open[0]
	assert.Equal(t, o.offset, open.CurrentTxnStartOffset)
	if pid >= 0 {
		assert.Equal(t, pid, open.ProducerID, "the open transaction is the producer's")
		assert.Equal(t, epoch, open.ProducerEpoch, "at the epoch of its records")
	}
	assert.Equal(t, "CompleteCommit", o.txn.State, "the coordinator has completed the commit")
	assert.Greater(t, o.txn.ProducerEpoch, open.ProducerEpoch, "the coordinator's epoch is past the open transaction's")
	_, listed := o.txn.Topics[topic]
	assert.False(t, listed, "the coordinator no longer lists %s", topic)
	assert.Equal(t, o.txn.ProducerID, open.ProducerID, "the open transaction is %s's", txnID)
	assert.NotEmpty(t, o.coordinatorLog, "node %d's log says it took %s-0 for deleted (%q)", coord, topic, hangingLogLine)
	h.findHanging(ctx, t, topic, open)

	h.repair(ctx, t, topic, bID, open, value)
}

// coordinator returns the node id of txnID's transaction coordinator,
// waiting while __transaction_state is created.
func (h *hangingCluster) coordinator(ctx context.Context, t *testing.T, txnID string) int32 {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp := h.adm.FindTxnCoordinators(ctx, txnID)
		c, ok := resp[txnID]
		if ok && c.Err == nil {
			return c.NodeID
		}
		err := resp.Error()
		if time.Now().After(deadline) {
			t.Fatalf("finding the transaction coordinator of %s: %v", txnID, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createOn creates topic with one partition whose only replica is node.
func (h *hangingCluster) createOn(ctx context.Context, t *testing.T, topic string, node int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{node}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	minISR := "1" // the cluster's default is 2: one replica could take no write
	rc := kmsg.NewCreateTopicsRequestTopicConfig()
	rc.Name, rc.Value = "min.insync.replicas", &minISR
	rt.Configs = append(rt.Configs, rc)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(ctx, h.cl)
	require.NoError(t, err, "creating %s", topic)
	require.Len(t, resp.Topics, 1)
	require.NoError(t, kerr.ErrorForCode(resp.Topics[0].ErrorCode), "creating %s on node %d", topic, node)
}

// waitLeader waits until node's metadata shows leader (-1: none) for
// topic's partition 0: the coordinator's own view is what decides.
func (h *hangingCluster) waitLeader(ctx context.Context, t *testing.T, node int32, topic string, leader int32) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	got, lastErr := int32(-2), error(nil)
	for time.Now().Before(deadline) {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := req.RequestWith(rctx, h.cl.Broker(int(node)))
		cancel()
		lastErr = err
		if err == nil && len(resp.Topics) == 1 {
			for _, p := range resp.Topics[0].Partitions {
				if p.Partition == 0 {
					got = p.Leader
				}
			}
			if got == leader && (leader < 0 || resp.Topics[0].ErrorCode == 0) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("node %d's metadata shows leader %d for %s/0, want %d (last error %v)", node, got, topic, leader, lastErr)
}

// watch reads topic's partition 0 read_committed from the start for at
// most bound and returns when value became readable (-1 never), leaving
// the partition's last stable offset and high watermark in stable, end.
func (h *hangingCluster) watch(ctx context.Context, t *testing.T, topic, value string, offset int64, bound time.Duration, stable, end *int64) time.Duration {
	t.Helper()
	rd, err := kgo.NewClient(kgo.SeedBrokers(h.k.Brokers()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(500*time.Millisecond))
	require.NoError(t, err)
	defer rd.Close()
	began := time.Now()
	read := time.Duration(-1)
	for time.Since(began) < bound {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fs := rd.PollFetches(pctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset == offset && string(r.Value) == value && read < 0 {
				read = time.Since(began)
			}
		})
		h.offsets(ctx, topic, stable, end)
		if read >= 0 {
			return read
		}
	}
	return read
}

// offsets reads topic's partition 0's last stable offset and high
// watermark into stable and end, leaving them as they are on an error.
func (h *hangingCluster) offsets(ctx context.Context, topic string, stable, end *int64) {
	if ls, err := h.adm.ListCommittedOffsets(ctx, topic); err == nil {
		if o, ok := ls.Lookup(topic, 0); ok && o.Err == nil {
			*stable = o.Offset
		}
	}
	if ls, err := h.adm.ListEndOffsets(ctx, topic); err == nil {
		if o, ok := ls.Lookup(topic, 0); ok && o.Err == nil {
			*end = o.Offset
		}
	}
}

// describe logs and returns the transactions DescribeProducers shows open
// on topic's partition 0 and what DescribeTransactions says of txnID.
func (h *hangingCluster) describe(ctx context.Context, t *testing.T, txnID, topic string) ([]kadm.DescribedProducer, kadm.DescribedTransaction) {
	t.Helper()
	var open []kadm.DescribedProducer
	var ps kadm.DescribedProducersTopics
	err := harness.Poll(30*time.Second, func() bool {
		var derr error
		ps, derr = h.adm.DescribeProducers(ctx, kadm.TopicsSet{topic: {0: {}}})
		return derr == nil && ps[topic].Partitions[0].Err == nil
	})
	require.NoError(t, err, "describing the producers of %s/0: %v", topic, ps[topic].Partitions[0].Err)
	ps.EachProducer(func(p kadm.DescribedProducer) {
		t.Logf("DescribeProducers %s/%d: producer id %d epoch %d, coordinator epoch %d, last sequence %d, open transaction from offset %d",
			p.Topic, p.Partition, p.ProducerID, p.ProducerEpoch, p.CoordinatorEpoch, p.LastSequence, p.CurrentTxnStartOffset)
		if p.CurrentTxnStartOffset >= 0 {
			open = append(open, p)
		}
	})
	txs, err := h.adm.DescribeTransactions(ctx, txnID)
	require.NoError(t, err, "describing transaction %s", txnID)
	d := txs[txnID]
	require.NoError(t, d.Err, "describing transaction %s", txnID)
	t.Logf("DescribeTransactions %s: %s, producer id %d epoch %d, coordinator %d, partitions %v", d.TxnID, d.State, d.ProducerID, d.ProducerEpoch, d.Coordinator, d.Topics)
	return open, d
}

// logLines returns node i's log lines that contain every one of words.
func (h *hangingCluster) logLines(i int, words ...string) []string {
	var out []string
	for _, l := range strings.Split(h.k.LogTail(i, 1<<30), "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(l, w)
		}
		if all {
			out = append(out, l)
		}
	}
	return out
}

// findHanging runs `kafka-transactions.sh find-hanging` on topic's
// partition 0 (with --max-transaction-timeout 0: any open transaction
// the coordinator does not list is hanging) and requires it to name the
// open transaction.
func (h *hangingCluster) findHanging(ctx context.Context, t *testing.T, topic string, open kadm.DescribedProducer) {
	t.Helper()
	args := []string{"--bootstrap-server", h.k.Brokers()[0], "find-hanging", "--topic", topic, "--partition", "0", "--max-transaction-timeout", "0"}
	out, err := h.k.RunTool(ctx, "org.apache.kafka.tools.TransactionsCommand", args...)
	require.NoError(t, err)
	want := []string{topic, "0", strconv.FormatInt(open.ProducerID, 10), strconv.Itoa(int(open.ProducerEpoch))}
	found := false
	var table []string // the output without the tool's log lines
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[") || strings.TrimSpace(l) == "" {
			continue
		}
		table = append(table, l)
		f := strings.Fields(l)
		found = found || len(f) >= 6 && slices.Equal(f[:4], want) && f[5] == strconv.FormatInt(open.CurrentTxnStartOffset, 10)
	}
	t.Logf("kafka-transactions.sh %s:\n%s", strings.Join(args, " "), strings.Join(table, "\n"))
	assert.True(t, found, "find-hanging names producer id %d epoch %d from offset %d on %s/0", open.ProducerID, open.ProducerEpoch, open.CurrentTxnStartOffset, topic)
}

// repair writes a COMMIT marker for the open transaction to the
// partition's leader, with the producer id, epoch and coordinator epoch
// DescribeProducers reported (kafka-transactions.sh abort's request with
// committed=true), and requires value to become readable read_committed.
func (h *hangingCluster) repair(ctx context.Context, t *testing.T, topic string, leader int32, open kadm.DescribedProducer, value string) {
	t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.Committed = open.ProducerID, open.ProducerEpoch, true
	m.CoordinatorEpoch = max(open.CoordinatorEpoch, 0) // as the tool: an absent coordinator epoch is 0
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = topic, []int32{0}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	resp, err := req.RequestWith(ctx, h.cl.Broker(int(leader)))
	require.NoError(t, err, "WriteTxnMarkers to node %d", leader)
	code := int16(-1)
	if len(resp.Markers) == 1 && len(resp.Markers[0].Topics) == 1 && len(resp.Markers[0].Topics[0].Partitions) == 1 {
		code = resp.Markers[0].Topics[0].Partitions[0].ErrorCode
	}
	t.Logf("WriteTxnMarkers v%d COMMIT (producer id %d epoch %d, coordinator epoch %d) to node %d: error code %d (%v)",
		resp.Version, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, leader, code, kerr.ErrorForCode(code))
	require.Zero(t, code, "the partition's leader accepts a COMMIT marker at the open transaction's epoch")
	var stable, end int64
	read := h.watch(ctx, t, topic, value, open.CurrentTxnStartOffset, 30*time.Second, &stable, &end)
	require.GreaterOrEqual(t, read, time.Duration(0), "after the COMMIT marker, read_committed reads the record (%s/0 stable up to %d of %d)", topic, stable, end)
	assert.Equal(t, end, stable, "nothing open on %s/0 after the COMMIT marker", topic)
	t.Logf("repaired: read_committed read the record %s after the COMMIT marker; %s/0 stable up to %d of %d", read.Round(time.Millisecond), topic, stable, end)
}

func errOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// franzTxn is twoStepTxn with a bare franz-go transactional producer.
type franzTxn struct {
	brokers []string
	p       *kgo.Client
	id      int64
	epoch   int16
}

func (f *franzTxn) begin(ctx context.Context, txnID, topic, value string) (int64, error) {
	var err error
	f.p, err = kgo.NewClient(kgo.SeedBrokers(f.brokers...), kgo.TransactionalID(txnID), kgo.TransactionTimeout(60*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		return 0, err
	}
	if err := f.p.BeginTransaction(); err != nil {
		return 0, err
	}
	r, err := f.p.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Key: []byte("k"), Value: []byte(value)}).First()
	if err != nil {
		return 0, err
	}
	f.id, f.epoch, err = f.p.ProducerID(ctx)
	return r.Offset, err
}

func (f *franzTxn) commit(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return f.p.EndTransaction(cctx, kgo.TryCommit)
}

func (f *franzTxn) producer() (int64, int16) { return f.id, f.epoch }

func (f *franzTxn) close() {
	if f.p != nil {
		f.p.Close()
	}
}

// javaTxn is twoStepTxn with Apache Kafka's Java producer
// (test/javaref/HangingMarker.java), one JVM per transaction.
type javaTxn struct {
	t         *testing.T
	bootstrap string
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	lines     *bufio.Scanner
	stderr    harness.LockedBuffer
	cancel    context.CancelFunc
}

func (j *javaTxn) begin(ctx context.Context, txnID, topic, value string) (int64, error) {
	java, cp := javaRef(j.t)
	var pctx context.Context
	pctx, j.cancel = context.WithTimeout(ctx, 5*time.Minute)
	j.cmd = exec.CommandContext(pctx, java, "-Xmx256m", "-XX:+UseSerialGC", "-Xshare:auto", "-cp", cp,
		"HangingMarker", j.bootstrap, topic, txnID, value)
	j.cmd.Stderr = &j.stderr
	var err error
	if j.stdin, err = j.cmd.StdinPipe(); err != nil {
		return 0, err
	}
	out, err := j.cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := j.cmd.Start(); err != nil {
		return 0, err
	}
	j.lines = bufio.NewScanner(out)
	line, err := j.line("sent ")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimPrefix(line, "sent "), 10, 64)
}

// line returns the program's next line that begins with one of
// prefixes, logging the lines before it (the client's own log).
func (j *javaTxn) line(prefixes ...string) (string, error) {
	for j.lines.Scan() {
		l := j.lines.Text()
		j.t.Logf("HangingMarker: %s", l)
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				return l, nil
			}
		}
	}
	return "", fmt.Errorf("HangingMarker ended before a line beginning %q (%v): %s", prefixes, j.lines.Err(), lastLogLines(j.stderr.String(), 20))
}

func (j *javaTxn) commit(context.Context) error {
	if _, err := io.WriteString(j.stdin, "commit\n"); err != nil {
		return err
	}
	l, err := j.line("committed ", "failed ")
	if err != nil {
		return err
	}
	if strings.HasPrefix(l, "committed ") {
		return nil
	}
	return errors.New(l)
}

// producer: the Java producer does not expose its producer id.
func (j *javaTxn) producer() (int64, int16) { return -1, -1 }

func (j *javaTxn) close() {
	if j.cmd == nil {
		return
	}
	_ = j.stdin.Close()
	if j.lines != nil {
		for j.lines.Scan() {
			j.t.Logf("HangingMarker: %s", j.lines.Text())
		}
	}
	_ = j.cmd.Wait()
	j.cancel()
}

// lastLogLines is the last n lines of s.
func lastLogLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

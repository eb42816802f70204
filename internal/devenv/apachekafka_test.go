package devenv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestApacheKafkaSingleNode formats and starts one real node, commits a
// transactional record, kills the node with SIGKILL once the commit markers
// are written, restarts it from the same data dir and reads the record back
// read_committed.
//
// The kill waits for the markers because a single node killed between
// EndTxn and its marker write can leave a hanging transaction: restarted
// within broker.session.timeout.ms it first leads its partitions from its
// own stale metadata, the controller then fences its old incarnation, and
// the reloaded coordinator finds no leader for the partition and skips its
// marker as if the topic were deleted (TransactionMarkerChannelManager). The
// coordinator reports CompleteCommit while the partition's last stable
// offset stays put. DESIGN.md ("Apache Kafka and kfake") describes it.
func TestApacheKafkaSingleNode(t *testing.T) {
	skipUnlessApache(t)
	t.Setenv(BrokersEnv, "")
	start := time.Now()
	k := NewApacheKafka(t, ApacheKafkaConfig{})
	t.Logf("apache kafka %s started in %v on %v", k.Apache.Version(), time.Since(start), k.Brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	p, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.TransactionalID("devenv-test"), kgo.DefaultProduceTopic("devenv"), kgo.AllowAutoTopicCreation())
	require.NoError(t, err)
	require.NoError(t, p.BeginTransaction())
	require.NoError(t, p.ProduceSync(ctx, &kgo.Record{Key: []byte("k"), Value: []byte("v1")}).FirstErr())
	require.NoError(t, p.EndTransaction(ctx, kgo.TryCommit))
	p.Close()
	waitStable(ctx, t, k.Brokers, "devenv")

	k.Apache.KillNode(0)
	require.False(t, k.Apache.Running(0))
	start = time.Now()
	require.NoError(t, k.Apache.StartNode(ctx, 0))
	t.Logf("restarted after SIGKILL in %v", time.Since(start))

	c, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.ConsumeTopics("devenv"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer c.Close()
	var got []string
	for len(got) < 1 && ctx.Err() == nil {
		fs := c.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 1 {
		t.Logf("node log:\n%s", k.Apache.LogTail(0, 150))
	}
	require.Equal(t, []string{"v1"}, got)
	require.NoError(t, k.Apache.StopNode(ctx, 0))
}

// TestApacheKafkaThreeNodes starts a three-node cluster and checks that a
// new topic gets replication factor 3, then survives the loss of a node.
func TestApacheKafkaThreeNodes(t *testing.T) {
	skipUnlessApache(t)
	start := time.Now()
	k := NewApacheKafka(t, ApacheKafkaConfig{Nodes: 3})
	t.Logf("three nodes started in %v", time.Since(start))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.TransactionalID("devenv-3"), kgo.DefaultProduceTopic("three"), kgo.AllowAutoTopicCreation())
	require.NoError(t, err)
	defer p.Close()
	commit := func(v string) {
		require.NoError(t, p.BeginTransaction())
		require.NoError(t, p.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr())
		require.NoError(t, p.EndTransaction(ctx, kgo.TryCommit))
	}
	commit("a")
	md, err := k.Apache.metadata(ctx, k.Brokers[0])
	require.NoError(t, err)
	for _, tp := range md.Topics {
		if tp.Topic != nil && *tp.Topic == "three" {
			for _, part := range tp.Partitions {
				require.Len(t, part.Replicas, 3)
			}
		}
	}
	k.Apache.KillNode(1)
	commit("b")
	require.NoError(t, k.Apache.StartNode(ctx, 1))
	require.NoError(t, k.Apache.WaitBrokers(ctx, 3))
}

// waitStable waits until every partition of topic has its last stable
// offset at its high watermark: no transaction is open on it any more.
func waitStable(ctx context.Context, t *testing.T, brokers []string, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for {
		end, errEnd := adm.ListEndOffsets(ctx, topic)
		stable, errStable := adm.ListCommittedOffsets(ctx, topic)
		if errEnd == nil && errStable == nil && end.Error() == nil && stable.Error() == nil {
			open := 0
			end.Each(func(o kadm.ListedOffset) {
				if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset != o.Offset {
					open++
				}
			})
			if open == 0 {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for the last stable offsets of %s to reach the high watermarks: %v", topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// skipUnlessApache runs the JVM tests only in the Apache Kafka pass (make
// test-apache), which runs its packages one at a time: beside the rest of
// the suite on two cores, a JVM's start and recovery times are not bounded.
func skipUnlessApache(t *testing.T) {
	t.Helper()
	if testing.Short() || os.Getenv("BINLOG_ROUTER_TEST_BROKER") != "apache" {
		t.Skip("starts JVMs: runs in make test-apache (BINLOG_ROUTER_TEST_BROKER=apache)")
	}
}

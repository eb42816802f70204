package test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestTransactionVersion0 runs the end-to-end contract and the
// exactly-once crash loop on a node formatted with transaction.version=0:
// the protocol before KIP-890 (the producer adds partitions with
// AddPartitionsToTxn, the epoch stays the same across transactions),
// which clusters upgraded from 3.x keep until an operator raises it. The
// shared node runs the same suites with transaction.version=2 (the 4.x
// default: partitions added by the broker at the first produce, an epoch
// bump per transaction); the test checks both levels as the brokers
// report them.
func TestTransactionVersion0(t *testing.T) {
	k, proxies := harness.PrivateApacheProxied(t, devenv.ApacheKafkaConfig{FormatArgs: []string{"--feature", "transaction.version=0"}})
	require.Equal(t, int16(0), finalizedFeature(t, k.Brokers, "transaction.version"), "the private node")
	require.Equal(t, int16(2), finalizedFeature(t, harness.SharedApache.Brokers(), "transaction.version"), "the shared node")
	newEnvOn := func(t *testing.T) *harness.Env {
		e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
		e.UseProxies(proxies)
		return e
	}
	t.Run("end to end", func(t *testing.T) { e2eTest(t, newEnvOn(t)) })
	t.Run("crash loop", func(t *testing.T) { crashTest(t, newEnvOn(t), "exactly-once") })
	// The protocols differ where a broker shows it: the producer epoch of
	// the router's transactional id across commits.
	t.Run("epochs", func(t *testing.T) {
		assert.Zero(t, commitsEpochBump(t, newEnvOn(t), 5), "transaction.version=0: one epoch for every transaction")
		assert.GreaterOrEqual(t, commitsEpochBump(t, harness.NewEnv(t, harness.EnvOpts{}), 5), 5, "transaction.version=2: a new epoch per transaction")
	})
}

// commitsEpochBump runs a router on e for n commits, one transaction each,
// and returns how far its producer epoch moved over them.
func commitsEpochBump(t *testing.T, e *harness.Env, n int) int {
	const name = "epochs"
	// One transactional id: every commit moves its epoch.
	r := harness.StartRouter(t, e.Args(name, "--kafka-transactions=1")...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	writeEvents(e, "Epoch", 1)
	c.Read(1, 60*time.Second)
	e.WaitCheckpoint(name, e.GTIDPos())
	before, err := harness.DescribeTxn(e.Kafka.Brokers, kafka.TransactionalID(name))
	require.NoError(t, err)
	for range n {
		writeEvents(e, "Epoch", 1)
		c.Read(1, 60*time.Second)
		e.WaitCheckpoint(name, e.GTIDPos())
	}
	after, err := harness.DescribeTxn(e.Kafka.Brokers, kafka.TransactionalID(name))
	require.NoError(t, err)
	require.Equal(t, 0, r.Stop(20*time.Second))
	require.Equal(t, before.ProducerID, after.ProducerID, "one producer id")
	t.Logf("%s: producer %d, epoch %d before %d commits, %d after", e.BrokerName(), after.ProducerID, before.ProducerEpoch, n, after.ProducerEpoch)
	return int(after.ProducerEpoch - before.ProducerEpoch)
}

// finalizedFeature is the cluster-wide level of a KRaft feature as the
// brokers report it in ApiVersions; a feature at level 0 is not listed.
func finalizedFeature(t testing.TB, brokers []string, name string) int16 {
	t.Helper()
	cl := harness.KafkaClient(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	for _, f := range resp.FinalizedFeatures {
		if f.Name == name {
			return f.MaxVersionLevel
		}
	}
	return 0
}

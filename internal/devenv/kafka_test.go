package devenv

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestKafkaProduceConsumeOverTCP(t *testing.T) {
	t.Setenv(BrokersEnv, "") // this test is about the in-process cluster
	k := NewKafka(t)
	require.False(t, k.External())
	require.Len(t, k.Brokers, 1)
	require.True(t, strings.HasPrefix(k.Brokers[0], "127.0.0.1:"), "broker %s not on loopback", k.Brokers[0])

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const topic = "devenv-test"
	producer, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.AllowAutoTopicCreation())
	require.NoError(t, err)
	defer producer.Close()
	rec := &kgo.Record{Topic: topic, Key: []byte("k1"), Value: []byte("v1"),
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}}
	require.NoError(t, producer.ProduceSync(ctx, rec).FirstErr())

	topics, err := kadm.NewClient(producer).ListTopics(ctx, topic)
	require.NoError(t, err)
	assert.Len(t, topics[topic].Partitions, 3, "auto-created topics default to 3 partitions")

	consumer, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer consumer.Close()
	fetches := consumer.PollRecords(ctx, 10)
	require.NoError(t, fetches.Err())
	got := fetches.Records()
	require.Len(t, got, 1)
	assert.Equal(t, "k1", string(got[0].Key))
	assert.Equal(t, "v1", string(got[0].Value))
	assert.Equal(t, rec.Partition, got[0].Partition)
	assert.Equal(t, []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}, got[0].Headers)
}

func TestStartKafkaHonoursBrokersEnv(t *testing.T) {
	t.Setenv(BrokersEnv, " 10.1.2.3:9092, kafka-2:9093 ,")
	k, err := StartKafka()
	require.NoError(t, err)
	defer k.Close()
	assert.True(t, k.External())
	assert.Nil(t, k.Cluster, "nothing may be started when KAFKA_BROKERS is set")
	assert.Equal(t, []string{"10.1.2.3:9092", "kafka-2:9093"}, k.Brokers)

	// StartKfake always starts the in-process cluster.
	f, err := StartKfake()
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, f.External())
	assert.NotEqual(t, k.Brokers, f.Brokers)
}

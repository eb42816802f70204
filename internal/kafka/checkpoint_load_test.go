package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestLoadReadsOnlyCommitted writes checkpoints in Kafka transactions, one
// of them aborted and one left open: Load returns the last committed one,
// ignores other names, and reports a missing name.
func TestLoadReadsOnlyCommitted(t *testing.T) {
	k := devenv.NewKafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...))
	require.NoError(t, err)
	defer adm.Close()
	const topic = "cp_test"
	require.NoError(t, EnsureCheckpointTopic(ctx, kadm.NewClient(adm), topic))
	require.NoError(t, EnsureCheckpointTopic(ctx, kadm.NewClient(adm), topic), "idempotent")

	_, err = LoadCheckpoint(ctx, topic, "a", kgo.SeedBrokers(k.Brokers...))
	require.True(t, errors.Is(err, checkpoint.ErrCheckpointMissing), "empty topic: %v", err)

	p, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.TransactionalID("cp-test"))
	require.NoError(t, err)
	defer p.Close()
	write := func(name, set string) {
		require.NoError(t, p.BeginTransaction())
		rec, err := (&checkpoint.Checkpoint{Name: name, GTIDSet: set, Flavor: "mariadb"}).Record(topic)
		require.NoError(t, err)
		require.NoError(t, p.ProduceSync(ctx, rec).FirstErr())
		require.NoError(t, p.EndTransaction(ctx, kgo.TryCommit))
	}
	write("a", "0-1-1")
	write("b", "0-1-5")
	write("a", "0-1-2")
	// Aborted: never visible.
	require.NoError(t, p.BeginTransaction())
	rec, _ := (&checkpoint.Checkpoint{Name: "a", GTIDSet: "0-1-99", Flavor: "mariadb"}).Record(topic)
	require.NoError(t, p.ProduceSync(ctx, rec).FirstErr())
	require.NoError(t, p.EndTransaction(ctx, kgo.TryAbort))

	got, err := LoadCheckpoint(ctx, topic, "a", kgo.SeedBrokers(k.Brokers...))
	require.NoError(t, err)
	assert.Equal(t, "0-1-2", got.GTIDSet)
	got, err = LoadCheckpoint(ctx, topic, "b", kgo.SeedBrokers(k.Brokers...))
	require.NoError(t, err)
	assert.Equal(t, "0-1-5", got.GTIDSet)
	_, err = LoadCheckpoint(ctx, topic, "nobody", kgo.SeedBrokers(k.Brokers...))
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing)

	// An open transaction is not waited for and not returned.
	require.NoError(t, p.BeginTransaction())
	rec, _ = (&checkpoint.Checkpoint{Name: "a", GTIDSet: "0-1-100", Flavor: "mariadb"}).Record(topic)
	require.NoError(t, p.ProduceSync(ctx, rec).FirstErr())
	got, err = LoadCheckpoint(ctx, topic, "a", kgo.SeedBrokers(k.Brokers...))
	require.NoError(t, err)
	assert.Equal(t, "0-1-2", got.GTIDSet)
	require.NoError(t, p.EndTransaction(ctx, kgo.TryAbort))
}

func TestEnsureTopicRefusesDeletePolicy(t *testing.T) {
	k := devenv.NewKafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	del := "delete"
	_, err = adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": &del}, "cp_deleting")
	require.NoError(t, err)
	err = EnsureCheckpointTopic(ctx, adm, "cp_deleting")
	assert.ErrorContains(t, err, "cleanup.policy=compact")
}

func BenchmarkLoad(b *testing.B) {
	k := devenv.NewKafka(b)
	ctx := context.Background()
	cl, _ := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.TransactionalID("bench"))
	defer cl.Close()
	require.NoError(b, EnsureCheckpointTopic(ctx, kadm.NewClient(cl), "cp_bench"))
	for i := 0; i < 3; i++ {
		require.NoError(b, cl.BeginTransaction())
		rec, _ := (&checkpoint.Checkpoint{Name: "a", GTIDSet: "0-1-1", Flavor: "mariadb"}).Record("cp_bench")
		require.NoError(b, cl.ProduceSync(ctx, rec).FirstErr())
		require.NoError(b, cl.EndTransaction(ctx, kgo.TryCommit))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := LoadCheckpoint(ctx, "cp_bench", "a", kgo.SeedBrokers(k.Brokers...)); err != nil {
			b.Fatal(err)
		}
	}
}

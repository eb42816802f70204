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

// TestSettleWaitsForTheOpenTransaction: a transaction that wrote a
// checkpoint and is not yet ended at the partition (as while Apache
// Kafka writes a commit's markers) holds Settle until it ends; Load
// then returns the checkpoint it committed, where before it returns the
// one before it. One that does not end in time is ErrUnsettled.
func TestSettleWaitsForTheOpenTransaction(t *testing.T) {
	k := devenv.NewKafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(k.Brokers...)}
	adm, err := kgo.NewClient(opts...)
	require.NoError(t, err)
	defer adm.Close()
	const topic = "cp_settle"
	require.NoError(t, EnsureCheckpointTopic(ctx, kadm.NewClient(adm), topic))

	p, err := kgo.NewClient(append(opts, kgo.TransactionalID("cp-settle"))...)
	require.NoError(t, err)
	defer p.Close()
	produce := func(set string) {
		t.Helper()
		rec, err := (&checkpoint.Checkpoint{Name: "a", GTIDSet: set, Flavor: "mariadb"}).Record(topic)
		require.NoError(t, err)
		require.NoError(t, p.ProduceSync(ctx, rec).FirstErr())
	}
	require.NoError(t, p.BeginTransaction())
	produce("0-1-1")
	require.NoError(t, p.EndTransaction(ctx, kgo.TryCommit))

	require.NoError(t, p.BeginTransaction())
	produce("0-1-2")
	_, err = Settle(ctx, topic, 300*time.Millisecond, opts...)
	require.True(t, errors.Is(err, ErrUnsettled), "open transaction: %v", err)
	assert.Contains(t, err.Error(), "find-hanging")
	assert.Contains(t, err.Error(), "from offset 2)", "names the open transaction")

	got, err := LoadCheckpoint(ctx, topic, "a", opts...)
	require.NoError(t, err)
	assert.Equal(t, "0-1-1", got.GTIDSet, "Load stops before the open transaction")

	ended := make(chan error, 1)
	time.AfterFunc(500*time.Millisecond, func() { ended <- p.EndTransaction(ctx, kgo.TryCommit) })
	st, err := Settle(ctx, topic, 30*time.Second, opts...)
	require.NoError(t, err)
	require.NoError(t, <-ended)
	assert.GreaterOrEqual(t, st.Waited, 400*time.Millisecond, "Settle returned before the transaction ended")
	assert.Less(t, st.FirstStable, st.HighWatermark)
	got, err = LoadCheckpoint(ctx, topic, "a", opts...)
	require.NoError(t, err)
	assert.Equal(t, "0-1-2", got.GTIDSet, "Load after Settle reads the outcome")

	st, err = Settle(ctx, topic, time.Second, opts...)
	require.NoError(t, err)
	assert.Zero(t, st.Waited, "nothing open: no wait")
}

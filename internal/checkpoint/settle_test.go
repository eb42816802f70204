package checkpoint

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestLoadSettledWaitsForTheOpenTransaction: a transaction that wrote a
// checkpoint and is not yet ended at the partition (as while Apache
// Kafka writes a commit's markers) holds LoadSettled until it ends, and
// LoadSettled then returns the checkpoint it committed, where Load
// returns the one before it. One that never ends is ErrUnsettled.
func TestLoadSettledWaitsForTheOpenTransaction(t *testing.T) {
	k := devenv.NewKafka(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(k.Brokers...)}
	adm, err := kgo.NewClient(opts...)
	require.NoError(t, err)
	defer adm.Close()
	const topic = "cp_settle"
	require.NoError(t, EnsureTopic(ctx, kadm.NewClient(adm), topic))

	p, err := kgo.NewClient(append(opts, kgo.TransactionalID("cp-settle"))...)
	require.NoError(t, err)
	defer p.Close()
	produce := func(set string) {
		t.Helper()
		rec, err := (&Checkpoint{Name: "a", GTIDSet: set, Flavor: "mariadb"}).Record(topic)
		require.NoError(t, err)
		require.NoError(t, p.ProduceSync(ctx, rec).FirstErr())
	}
	require.NoError(t, p.BeginTransaction())
	produce("0-1-1")
	require.NoError(t, p.EndTransaction(ctx, kgo.TryCommit))

	require.NoError(t, p.BeginTransaction())
	produce("0-1-2")
	_, err = LoadSettled(ctx, topic, "a", 300*time.Millisecond, opts...)
	require.True(t, errors.Is(err, ErrUnsettled), "open transaction: %v", err)
	assert.Contains(t, err.Error(), "find-hanging")

	got, err := Load(ctx, topic, "a", opts...)
	require.NoError(t, err)
	assert.Equal(t, "0-1-1", got.GTIDSet, "Load stops before the open transaction")

	ended := make(chan error, 1)
	time.AfterFunc(500*time.Millisecond, func() { ended <- p.EndTransaction(ctx, kgo.TryCommit) })
	began := time.Now()
	got, err = LoadSettled(ctx, topic, "a", 30*time.Second, opts...)
	require.NoError(t, err)
	require.NoError(t, <-ended)
	assert.Equal(t, "0-1-2", got.GTIDSet, "LoadSettled reads the outcome")
	assert.GreaterOrEqual(t, time.Since(began), 400*time.Millisecond, "LoadSettled returned before the transaction ended")
}

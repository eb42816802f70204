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

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/schema"
)

func TestRecordDecodeRoundTrip(t *testing.T) {
	c := &Checkpoint{Name: "r1", GTIDSet: "0-1-42,1-2-7", Flavor: "mariadb", ServerID: 1,
		BinlogFile: "mysql-bin.000003", BinlogPos: 1234, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		XAPrepared: []binlog.PreparedXA{{XID: "X'7831',X'',1", GTID: "0-1-40", File: "mysql-bin.000002", Pos: 617, Outbox: true}}}
	rec, err := c.Record("cp")
	require.NoError(t, err)
	assert.Equal(t, "cp", rec.Topic)
	assert.Equal(t, []byte("r1"), rec.Key)
	got, err := Decode(rec.Value)
	require.NoError(t, err)
	assert.Equal(t, c, got)
	assert.Contains(t, string(rec.Value), `"xa_prepared":[{"xid":"X'7831',X'',1","gtid":"0-1-40","binlog_file":"mysql-bin.000002","binlog_pos":617,"outbox":true}]`)

	_, err = Decode([]byte(`{"gtid_set":"0-1-1"}`))
	assert.ErrorContains(t, err, "no flavor")
	_, err = Decode([]byte(`not json`))
	assert.ErrorContains(t, err, "decoding checkpoint")
}

// Layouts round-trip with their character sets and signs, and a
// checkpoint of an earlier version, whose layouts are arrays of columns
// with names and types only, still loads: with character sets and signs
// not known (empty), never guessed.
func TestLayoutsOldAndNew(t *testing.T) {
	c := &Checkpoint{Name: "r1", GTIDSet: "0-1-42", Flavor: "mariadb", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Layouts: map[string]schema.TableDef{"shop.outbox": {Charset: "latin1", Columns: []schema.ColumnDef{
			{Name: "id", DataType: "bigint", Sign: schema.Unsigned}, {Name: "event_id", DataType: "binary", Charset: "binary"},
			{Name: "payload", DataType: "longtext", Charset: "cp1250"}}}}}
	rec, err := c.Record("cp")
	require.NoError(t, err)
	assert.Contains(t, string(rec.Value), `"layouts":{"shop.outbox":{"columns":[{"name":"id","type":"bigint","sign":"unsigned"},{"name":"event_id","type":"binary","charset":"binary"},{"name":"payload","type":"longtext","charset":"cp1250"}],"charset":"latin1"}}`)
	got, err := Decode(rec.Value)
	require.NoError(t, err)
	assert.Equal(t, c, got)

	old := `{"name":"r1","gtid_set":"0-1-42","flavor":"mariadb","server_id":1,"time":"2026-01-02T03:04:05Z",` +
		`"layouts":{"shop.outbox":[{"name":"id","type":"bigint"},{"name":"payload","type":"longtext"}]}}`
	got, err = Decode([]byte(old))
	require.NoError(t, err)
	assert.Equal(t, map[string]schema.TableDef{"shop.outbox": {Columns: []schema.ColumnDef{
		{Name: "id", DataType: "bigint"}, {Name: "payload", DataType: "longtext"}}}}, got.Layouts)
}

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
	require.NoError(t, EnsureTopic(ctx, kadm.NewClient(adm), topic))
	require.NoError(t, EnsureTopic(ctx, kadm.NewClient(adm), topic), "idempotent")

	_, err = Load(ctx, topic, "a", kgo.SeedBrokers(k.Brokers...))
	require.True(t, errors.Is(err, ErrCheckpointMissing), "empty topic: %v", err)

	p, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.TransactionalID("cp-test"))
	require.NoError(t, err)
	defer p.Close()
	write := func(name, set string) {
		require.NoError(t, p.BeginTransaction())
		rec, err := (&Checkpoint{Name: name, GTIDSet: set, Flavor: "mariadb"}).Record(topic)
		require.NoError(t, err)
		require.NoError(t, p.ProduceSync(ctx, rec).FirstErr())
		require.NoError(t, p.EndTransaction(ctx, kgo.TryCommit))
	}
	write("a", "0-1-1")
	write("b", "0-1-5")
	write("a", "0-1-2")
	// Aborted: never visible.
	require.NoError(t, p.BeginTransaction())
	rec, _ := (&Checkpoint{Name: "a", GTIDSet: "0-1-99", Flavor: "mariadb"}).Record(topic)
	require.NoError(t, p.ProduceSync(ctx, rec).FirstErr())
	require.NoError(t, p.EndTransaction(ctx, kgo.TryAbort))

	got, err := Load(ctx, topic, "a", kgo.SeedBrokers(k.Brokers...))
	require.NoError(t, err)
	assert.Equal(t, "0-1-2", got.GTIDSet)
	got, err = Load(ctx, topic, "b", kgo.SeedBrokers(k.Brokers...))
	require.NoError(t, err)
	assert.Equal(t, "0-1-5", got.GTIDSet)
	_, err = Load(ctx, topic, "nobody", kgo.SeedBrokers(k.Brokers...))
	assert.ErrorIs(t, err, ErrCheckpointMissing)

	// An open transaction is not waited for and not returned.
	require.NoError(t, p.BeginTransaction())
	rec, _ = (&Checkpoint{Name: "a", GTIDSet: "0-1-100", Flavor: "mariadb"}).Record(topic)
	require.NoError(t, p.ProduceSync(ctx, rec).FirstErr())
	got, err = Load(ctx, topic, "a", kgo.SeedBrokers(k.Brokers...))
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
	err = EnsureTopic(ctx, adm, "cp_deleting")
	assert.ErrorContains(t, err, "cleanup.policy=compact")
}

func BenchmarkLoad(b *testing.B) {
	k := devenv.NewKafka(b)
	ctx := context.Background()
	cl, _ := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.TransactionalID("bench"))
	defer cl.Close()
	require.NoError(b, EnsureTopic(ctx, kadm.NewClient(cl), "cp_bench"))
	for i := 0; i < 3; i++ {
		require.NoError(b, cl.BeginTransaction())
		rec, _ := (&Checkpoint{Name: "a", GTIDSet: "0-1-1", Flavor: "mariadb"}).Record("cp_bench")
		require.NoError(b, cl.ProduceSync(ctx, rec).FirstErr())
		require.NoError(b, cl.EndTransaction(ctx, kgo.TryCommit))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Load(ctx, "cp_bench", "a", kgo.SeedBrokers(k.Brokers...)); err != nil {
			b.Fatal(err)
		}
	}
}

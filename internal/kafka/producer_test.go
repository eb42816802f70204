package kafka

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/route"
)

func newCluster(t *testing.T, opts ...kfake.Opt) *devenv.Kafka {
	t.Helper()
	k, err := devenv.StartKfake(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// testConfig is a small transactional producer's configuration for the
// tests' cluster k (set TransactionalID, or a session's ids).
func testConfig(k *devenv.Kafka) Config {
	return Config{
		Kafka:              []kgo.Opt{kgo.SeedBrokers(k.Brokers...)},
		TransactionTimeout: time.Minute,
		MaxBufferedRecords: 100,
		MaxBufferedBytes:   1 << 20,
		MaxMessageBytes:    1 << 20,
		AutoCreateTopics:   true,
		Logger:             zerolog.Nop(),
		Log:                zerolog.Nop(),
	}
}

func newProducer(t *testing.T, k *devenv.Kafka, txnID string) *Producer {
	t.Helper()
	cfg := testConfig(k)
	cfg.TransactionalID = txnID
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Init(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

func record(topic, id string) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte(`{}`), Headers: []kgo.RecordHeader{
		{Key: route.HeaderID, Value: []byte(id)}, {Key: route.HeaderBinlogGTID, Value: []byte("0-1-7")}}}
}

// readCommitted returns the ids of the records a read_committed consumer
// reads from topic, up to and including the record of id last.
func readCommitted(t *testing.T, k *devenv.Kafka, topic, last string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ids []string
	for !slices.Contains(ids, last) {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("reading %s (read %v): %v", topic, ids, err)
		}
		fs.EachRecord(func(r *kgo.Record) { ids = append(ids, string(r.Headers[0].Value)) })
	}
	return ids
}

// Commit makes a transaction's records visible to read_committed
// consumers; Abort makes them never visible.
func TestProducerCommitAndAbort(t *testing.T) {
	k := newCluster(t)
	p := newProducer(t, k, "producer-test")
	ctx := context.Background()
	if _, open := p.Began(); open {
		t.Fatal("a transaction is open before Begin")
	}
	mustNil(t, p.Begin())
	began, open := p.Began()
	if !open || time.Since(began) > time.Minute {
		t.Fatalf("Began() = %s, %v after Begin", began, open)
	}
	p.Produce(ctx, record("t", "a"))
	p.Produce(ctx, record("t", "b"))
	mustNil(t, p.Flush(ctx))
	mustNil(t, p.Err())
	mustNil(t, p.Commit(ctx))
	if _, open := p.Began(); open {
		t.Fatal("a transaction is open after Commit")
	}
	mustNil(t, p.Begin())
	p.Produce(ctx, record("t", "c"))
	mustNil(t, p.Flush(ctx))
	p.Abort(ctx)
	mustNil(t, p.Begin())
	p.Produce(ctx, record("t", "d"))
	mustNil(t, p.Flush(ctx))
	mustNil(t, p.Commit(ctx))
	if got := readCommitted(t, k, "t", "d"); !slices.Equal(got, []string{"a", "b", "d"}) {
		t.Fatalf("read_committed consumer read %v, want [a b d]", got)
	}
}

// A record that fails ends a Flush in progress at once, although another
// record is still unanswered, and Err names the failed record's row.
func TestProducerFailureEndsFlush(t *testing.T) {
	k := newCluster(t, kfake.NumBrokers(2), kfake.SeedTopics(1, "slow", "refused"))
	c := k.Cluster
	mustNil(t, c.MoveTopicPartition("slow", 0, 0))
	mustNil(t, c.MoveTopicPartition("refused", 0, 1))
	held, release := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(release) })
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if c.CurrentNode() == 0 { // "slow": hold the request
			select {
			case held <- struct{}{}:
			default:
			}
			c.SleepControl(func() { <-release })
			return nil, nil, false
		}
		pr := req.(*kmsg.ProduceRequest)
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range pr.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})

	p := newProducer(t, k, "producer-fail")
	ctx := context.Background()
	mustNil(t, p.Begin())
	p.Produce(ctx, record("slow", "held"))
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("the slow record's produce request never came")
	}
	flushCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	flushed := make(chan error, 1)
	began := time.Now()
	go func() { flushed <- p.Flush(flushCtx) }()
	p.Produce(ctx, record("refused", "bad"))
	select {
	case err := <-flushed:
		mustNil(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Flush still waits for the held record a minute after another failed")
	}
	err := p.Err()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) || !strings.Contains(err.Error(), "event_id bad (transaction 0-1-7) to topic refused") {
		t.Fatalf("Err() = %v, want the refused record named", err)
	}
	t.Logf("Flush ended %s after it began", time.Since(began).Round(time.Millisecond))
	if err := p.Flush(ctx); err != nil || p.Err() == nil {
		t.Fatalf("a later Flush: %v, Err %v; want nil at once and the failure kept", err, p.Err())
	}
}

// Drop forgets a fenced producer's transaction without an EndTxn request
// (an abort would bump the epoch of the producer that took over).
func TestProducerDropAfterFence(t *testing.T) {
	k := newCluster(t)
	var endTxns int
	k.Cluster.ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		k.Cluster.KeepControl()
		endTxns++
		return nil, nil, false
	})
	ctx := context.Background()
	old := newProducer(t, k, "producer-fenced")
	mustNil(t, old.Begin())
	old.Produce(ctx, record("f", "old"))
	mustNil(t, old.Flush(ctx))
	taker := newProducer(t, k, "producer-fenced") // fences old, aborting its transaction
	err := old.Commit(ctx)
	if !StaleEpoch(err) || Retriable(err) {
		t.Fatalf("Commit of a fenced producer: %v; want a stale epoch, not retriable", err)
	}
	before := endTxns
	old.Drop(ctx)
	if _, open := old.Began(); open || endTxns != before {
		t.Fatalf("after Drop: transaction open %v, %d EndTxn requests sent", open, endTxns-before)
	}
	mustNil(t, taker.Begin())
	taker.Produce(ctx, record("f", "new"))
	mustNil(t, taker.Flush(ctx))
	mustNil(t, taker.Commit(ctx))
	if got := readCommitted(t, k, "f", "new"); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("read_committed consumer read %v, want only the new producer's record", got)
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

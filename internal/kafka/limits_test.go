package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func newLimitsCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts an in-process kfake cluster (runs in make test)")
	}
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestBatchBytesIsFranzGosSize: a record of batchBytes n goes through a
// producer whose batch limit is n and is refused (MESSAGE_TOO_LARGE,
// before it is sent) by one whose limit is n-1, for records whose varint
// lengths cross their one-, two- and three-byte boundaries.
func TestBatchBytesIsFranzGosSize(t *testing.T) {
	c := newLimitsCluster(t)
	hdr := func(k string, n int) kgo.RecordHeader {
		return kgo.RecordHeader{Key: k, Value: []byte(strings.Repeat("h", n))}
	}
	recs := []*kgo.Record{
		{Value: []byte(strings.Repeat("v", 500))},
		{Key: []byte("k"), Value: []byte(strings.Repeat("v", 8100))},
		{Key: []byte(strings.Repeat("k", 63)), Value: []byte(strings.Repeat("v", 64)), Headers: []kgo.RecordHeader{hdr("id", 400)}},
		{Key: []byte(strings.Repeat("k", 200)), Value: []byte(strings.Repeat("v", 20000)),
			Headers: []kgo.RecordHeader{hdr("id", 36), hdr("binlog_gtid", 7), hdr("x", 70000)}},
		{Key: []byte{}, Value: nil, Headers: []kgo.RecordHeader{hdr("big", 1000)}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produce := func(rec *kgo.Record, batchMax int) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.AllowAutoTopicCreation(),
			kgo.ProducerBatchMaxBytes(int32(batchMax)), kgo.RecordRetries(3))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		r := *rec
		r.Topic = "sizes"
		r.Timestamp = time.Now()
		return cl.ProduceSync(ctx, &r).FirstErr()
	}
	for i, rec := range recs {
		n := BatchBytes(rec)
		if err := produce(rec, n); err != nil {
			t.Errorf("record %d (batchBytes %d) with a batch limit of %d: %v", i, n, n, err)
		}
		if err := produce(rec, n-1); !errors.Is(err, kerr.MessageTooLarge) {
			t.Errorf("record %d (batchBytes %d) with a batch limit of %d: got %v, want MESSAGE_TOO_LARGE", i, n, n-1, err)
		}
	}
}

// TestTopicLimitsRead: a topic's limit is the smaller of the flag and its
// max.message.bytes, which is its own override or the brokers'
// message.max.bytes; a topic that does not exist yet gets the brokers'.
func TestTopicLimitsRead(t *testing.T) {
	c := newLimitsCluster(t, kfake.BrokerConfigs(map[string]string{"message.max.bytes": "50000"}))
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	small := "20000"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": &small}, "small"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "plain"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag   int
		topic  string
		create bool
		want   Limit
	}{
		{1 << 20, "small", false, Limit{Bytes: 20000, Source: FromTopic}},
		{1 << 20, "plain", false, Limit{Bytes: 50000, Source: FromBroker}},
		{1 << 20, "missing", false, Limit{Bytes: 50000, Source: FromBroker}},
		{10000, "small", false, Limit{Bytes: 10000, Source: FromFlag}},
		{20000, "small", false, Limit{Bytes: 20000, Source: FromFlag}},
		{10000, "missing", false, Limit{Bytes: 10000, Source: FromFlag}},
		{1 << 20, "created", true, Limit{Bytes: 50000, Source: FromBroker}},
	} {
		l := newTopicLimits(c.flag, c.create, zerolog.Nop())
		l.setClient(cl)
		if got := l.BatchMax(c.topic); got != int32(c.flag) {
			t.Errorf("flag %d, %s before reading: batchMax %d, want the flag", c.flag, c.topic, got)
		}
		got, err := l.Of(ctx, c.topic)
		if err != nil {
			t.Fatalf("flag %d, %s: %v", c.flag, c.topic, err)
		}
		if got != c.want {
			t.Errorf("flag %d, %s: got %+v, want %+v", c.flag, c.topic, got, c.want)
		}
		if b := l.BatchMax(c.topic); b != int32(c.want.Bytes) {
			t.Errorf("flag %d, %s: batchMax %d, want %d", c.flag, c.topic, b, c.want.Bytes)
		}
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("missing") || !topics.Has("created") {
		t.Errorf("topics %v: want created (auto-creation on) and not missing (off)", topics.Names())
	}
}

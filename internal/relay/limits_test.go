package relay

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/route"
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
		n := batchBytes(rec)
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
		want   limit
	}{
		{1 << 20, "small", false, limit{20000, fromTopic}},
		{1 << 20, "plain", false, limit{50000, fromBroker}},
		{1 << 20, "missing", false, limit{50000, fromBroker}},
		{10000, "small", false, limit{10000, fromFlag}},
		{20000, "small", false, limit{20000, fromFlag}},
		{10000, "missing", false, limit{10000, fromFlag}},
		{1 << 20, "created", true, limit{50000, fromBroker}},
	} {
		l := newTopicLimits(c.flag, c.create, zerolog.Nop())
		l.setClient(cl)
		if got := l.batchMax(c.topic); got != int32(c.flag) {
			t.Errorf("flag %d, %s before reading: batchMax %d, want the flag", c.flag, c.topic, got)
		}
		got, err := l.of(ctx, c.topic)
		if err != nil {
			t.Fatalf("flag %d, %s: %v", c.flag, c.topic, err)
		}
		if got != c.want {
			t.Errorf("flag %d, %s: got %+v, want %+v", c.flag, c.topic, got, c.want)
		}
		if b := l.batchMax(c.topic); b != int32(c.want.bytes) {
			t.Errorf("flag %d, %s: batchMax %d, want %d", c.flag, c.topic, b, c.want.bytes)
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

// TestTooLargeNamesTheSetting: the row error names the row, the limit
// that refused its record and the setting to raise.
func TestTooLargeNamesTheSetting(t *testing.T) {
	row := &binlog.OutboxRow{Database: "shop", Table: "outbox", EventID: []byte("5b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b")}
	txn := &binlog.Txn{GTID: "0-1-42"}
	for _, c := range []struct {
		src  limitSource
		want []string
	}{
		{fromTopic, []string{"over topic orders's max.message.bytes (20000 bytes)", "--entity-name orders --add-config max.message.bytes=60123"}},
		{fromBroker, []string{"over the brokers' message.max.bytes (20000 bytes)", "raise the brokers' message.max.bytes"}},
		{fromFlag, []string{"over --max-message-bytes (20000 bytes)", "raise --max-message-bytes to at least 60123"}},
	} {
		msg := tooLarge(row, txn, "orders", 60123, limit{20000, c.src}).Error()
		for _, w := range append(c.want, "shop.outbox", "event_id=5b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", "gtid=0-1-42", "takes 60123 bytes") {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q lacks %q", c.src, msg, w)
			}
		}
	}
}

// TestDeadLetterFitsItsTopic: a dead letter is truncated until it fits
// the dead-letter topic's limit, also when JSON escaping makes the
// payload six times longer; a small payload is kept whole.
func TestDeadLetterFitsItsTopic(t *testing.T) {
	txn := &binlog.Txn{GTID: "0-1-7", Time: time.Now()}
	re := &route.RowError{Table: "shop.outbox", GTID: "0-1-7", EventID: "e1", Kind: route.KindRecordTooLarge, Err: errors.New("too large")}
	for _, c := range []struct {
		payload   string
		truncated bool
	}{
		{strings.Repeat("x", 60000), true},
		{strings.Repeat("\x01", 60000), true},
		{strings.Repeat("\xff", 60000), true}, // not UTF-8: base64
		{`{"small":true}`, false},
	} {
		row := &binlog.OutboxRow{Database: "shop", Table: "outbox", EventID: []byte("e1"), AggregateID: []byte("a1"), Payload: []byte(c.payload)}
		rec := deadLetterRecord("dlq", row, txn, re, 20000)
		if n := batchBytes(rec); n > 20000 {
			t.Errorf("payload %q...: dead letter takes %d bytes, over the limit 20000", c.payload[:4], n)
		}
		var d deadLetter
		if err := json.Unmarshal(rec.Value, &d); err != nil {
			t.Fatal(err)
		}
		if d.Truncated != c.truncated {
			t.Errorf("payload %q...: truncated %v, want %v", c.payload[:4], d.Truncated, c.truncated)
		}
		if !c.truncated && (d.Payload == nil || *d.Payload != c.payload) {
			t.Errorf("payload %q: kept as %v", c.payload, d.Payload)
		}
	}
}

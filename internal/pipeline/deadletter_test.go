package pipeline

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/route"
)

// TestTooLargeNamesTheSetting: the row error names the row, the limit
// that refused its record and the setting to raise.
func TestTooLargeNamesTheSetting(t *testing.T) {
	row := &binlog.OutboxRow{Database: "shop", Table: "outbox", EventID: []byte("5b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b")}
	txn := &binlog.Txn{GTID: "0-1-42"}
	for _, c := range []struct {
		src  kafka.LimitSource
		want []string
	}{
		{kafka.FromTopic, []string{"over topic orders's max.message.bytes (20000 bytes)", "--entity-name orders --add-config max.message.bytes=60123"}},
		{kafka.FromBroker, []string{"over the brokers' message.max.bytes (20000 bytes)", "raise the brokers' message.max.bytes"}},
		{kafka.FromFlag, []string{"over --max-message-bytes (20000 bytes)", "raise --max-message-bytes to at least 60123"}},
	} {
		msg := TooLarge(row, txn, &kafka.TooLargeError{Topic: "orders", Size: 60123, Limit: kafka.Limit{Bytes: 20000, Source: c.src}}).Error()
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
		rec := route.DeadLetter("dlq", row, txn, re, func(rec *kgo.Record) bool { return kafka.BatchBytes(rec) <= 20000 })
		if n := kafka.BatchBytes(rec); n > 20000 {
			t.Errorf("payload %q...: dead letter takes %d bytes, over the limit 20000", c.payload[:4], n)
		}
		var d struct {
			Payload   *string `json:"payload"`
			Truncated bool    `json:"payload_truncated"`
		}
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

package relay

import (
	"encoding/base64"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/route"
)

// recordOverhead approximates the bytes a record adds to its key, value
// and headers in a batch (lengths, offsets, attributes, batch header).
const recordOverhead = 128

func recordSize(rec *kgo.Record) int {
	n := len(rec.Topic) + len(rec.Key) + len(rec.Value) + recordOverhead
	for _, h := range rec.Headers {
		n += len(h.Key) + len(h.Value) + 8
	}
	return n
}

// tooLarge is the row error of a record over the size limit.
func tooLarge(row *binlog.OutboxRow, txn *binlog.Txn, size, limit int) *route.RowError {
	return route.TooLarge(row.Database+"."+row.Table, txn.GTID, string(row.EventID), size, limit)
}

// deadLetter is the JSON value of a dead-letter record: the original row,
// what was wrong, and where it came from.
type deadLetter struct {
	Table         string    `json:"table"`
	GTID          string    `json:"gtid"`
	EventID       string    `json:"event_id"`
	AggregateType *string   `json:"aggregate_type"`
	AggregateID   *string   `json:"aggregate_id"`
	EventType     *string   `json:"event_type"`
	Payload       *string   `json:"payload"`
	PayloadBase64 string    `json:"payload_base64,omitempty"` // when the payload is not UTF-8
	Truncated     bool      `json:"payload_truncated,omitempty"`
	SchemaVersion *string   `json:"schema_version,omitempty"`
	Traceparent   *string   `json:"traceparent,omitempty"`
	Headers       *string   `json:"headers,omitempty"`
	CreatedAt     time.Time `json:"created_at,omitzero"`
	CommitTime    time.Time `json:"commit_time,omitzero"`
	Error         string    `json:"error"`
	Kind          string    `json:"kind"`
}

// deadLetterRecord builds the record that diverts an unroutable row to
// topic. It never fails: a payload too large for the record is truncated
// (and marked so).
func deadLetterRecord(topic string, row *binlog.OutboxRow, txn *binlog.Txn, re *route.RowError, limit int) *kgo.Record {
	d := deadLetter{
		Table: row.Database + "." + row.Table, GTID: txn.GTID, EventID: string(row.EventID),
		AggregateType: text(row.AggregateType), AggregateID: text(row.AggregateID), EventType: text(row.EventType),
		SchemaVersion: text(row.SchemaVersion), Traceparent: text(row.Traceparent), Headers: text(row.Headers),
		CreatedAt: row.CreatedAt, CommitTime: txn.Time, Error: re.Error(), Kind: string(re.Kind),
	}
	payload := row.Payload
	if max := limit / 2; len(payload) > max {
		payload, d.Truncated = payload[:max], true
	}
	if utf8.Valid(payload) {
		d.Payload = text(payload)
	} else {
		d.PayloadBase64 = base64.StdEncoding.EncodeToString(payload)
	}
	value, err := json.Marshal(d)
	if err != nil { // cannot happen: every field is a string or time
		value = []byte(`{"error":"encoding dead letter failed"}`)
	}
	key := row.AggregateID
	if len(key) == 0 {
		key = row.EventID
	}
	return &kgo.Record{
		Topic: topic,
		Key:   key,
		Value: value,
		Headers: []kgo.RecordHeader{
			{Key: route.HeaderID, Value: row.EventID},
			{Key: route.HeaderBinlogGTID, Value: []byte(txn.GTID)},
			{Key: route.HeaderSourceTable, Value: []byte(d.Table)},
			{Key: route.HeaderErrorKind, Value: []byte(re.Kind)},
			{Key: route.HeaderError, Value: []byte(re.Error())},
		},
		Timestamp: txn.Time,
	}
}

func text(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

package route

import (
	"encoding/base64"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

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

// DeadLetter builds the record that diverts an unroutable row to topic.
// It never fails: a payload too large for the topic (fits says whether a
// record fits its batch limit) is truncated, and marked so, until the
// record fits.
func DeadLetter(topic string, row *binlog.OutboxRow, txn *binlog.Txn, re *RowError, fits func(*kgo.Record) bool) *kgo.Record {
	d := deadLetter{
		Table: row.Database + "." + row.Table, GTID: txn.GTID, EventID: string(row.EventID),
		AggregateType: text(row.AggregateType), AggregateID: text(row.AggregateID), EventType: text(row.EventType),
		SchemaVersion: text(row.SchemaVersion), Traceparent: text(row.Traceparent), Headers: text(row.Headers),
		CreatedAt: row.CreatedAt, CommitTime: txn.Time, Error: re.Error(), Kind: string(re.Kind),
	}
	key := row.AggregateID
	if len(key) == 0 {
		key = row.EventID
	}
	rec := &kgo.Record{
		Topic: topic,
		Key:   key,
		Headers: []kgo.RecordHeader{
			{Key: HeaderID, Value: row.EventID},
			{Key: HeaderBinlogGTID, Value: []byte(txn.GTID)},
			{Key: HeaderSourceTable, Value: []byte(d.Table)},
			{Key: HeaderErrorKind, Value: []byte(re.Kind)},
			{Key: HeaderError, Value: []byte(re.Error())},
		},
		Timestamp: txn.Time,
	}
	// JSON escapes can make the payload up to six times longer: halve what
	// is kept until the record fits.
	for keep := len(row.Payload); ; keep /= 2 {
		rec.Value = deadLetterValue(d, row.Payload, keep)
		if keep == 0 || fits(rec) {
			return rec
		}
	}
}

// deadLetterValue is d with the first keep bytes of payload.
func deadLetterValue(d deadLetter, payload []byte, keep int) []byte {
	if len(payload) > keep {
		payload, d.Truncated = payload[:keep], true
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
	return value
}

func text(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

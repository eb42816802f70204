package route

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

func TestRowErrors(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		row  func(*binlog.OutboxRow)
		want string // the full message
	}{
		{
			name: "NULL aggregate_id", kind: KindNullAggregateID,
			row:  func(r *binlog.OutboxRow) { r.AggregateID = nil },
			want: "outbox row shop.outbox event_id=" + testEventID + " gtid=0-1-42: aggregate_id is NULL; every outbox row needs an aggregate_id (it is the Kafka key)",
		},
		{
			name: "empty aggregate_id", kind: KindNullAggregateID,
			row:  func(r *binlog.OutboxRow) { r.AggregateID = []byte{} },
			want: "outbox row shop.outbox event_id=" + testEventID + " gtid=0-1-42: aggregate_id is empty; every outbox row needs an aggregate_id (it is the Kafka key)",
		},
		{
			name: "NULL event_type", kind: KindNullEventType,
			row:  func(r *binlog.OutboxRow) { r.EventType = nil },
			want: "outbox row shop.outbox event_id=" + testEventID + " gtid=0-1-42: event_type is NULL; every outbox row needs an event_type",
		},
		{
			name: "NULL event_id", kind: KindNullEventID,
			row:  func(r *binlog.OutboxRow) { r.EventID = nil },
			want: "outbox row shop.outbox event_id=(none) gtid=0-1-42: event_id is NULL; every outbox row needs a unique event_id (a UUID)",
		},
		{
			name: "empty event_id", kind: KindNullEventID,
			row:  func(r *binlog.OutboxRow) { r.EventID = []byte{} },
			want: "outbox row shop.outbox event_id=(none) gtid=0-1-42: event_id is empty; every outbox row needs a unique event_id (a UUID)",
		},
		{
			name: "invalid event_id", kind: KindInvalidEventID,
			row:  func(r *binlog.OutboxRow) { r.EventID = []byte("evt 1") },
			want: `outbox row shop.outbox event_id="evt 1" gtid=0-1-42: event_id "evt 1" is not a UUID in canonical 36-character form (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx); write UUIDs, or run with --require-uuid=false`,
		},
		{
			name: "binary event_id", kind: KindInvalidEventID,
			row:  func(r *binlog.OutboxRow) { r.EventID = []byte{0xde, 0xad, 0xbe, 0xef, 0, 1} },
			want: `outbox row shop.outbox event_id=0xdeadbeef0001 gtid=0-1-42: event_id 0xdeadbeef0001 is not a UUID in canonical 36-character form (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx); write UUIDs, or run with --require-uuid=false`,
		},
		{
			name: "latin1 payload", kind: KindInvalidPayloadJSON,
			row:  func(r *binlog.OutboxRow) { r.Payload = []byte("{\"n\":\"Caf\xe9\"}") },
			want: "outbox row shop.outbox event_id=" + testEventID + " gtid=0-1-42: payload (12 bytes) is not valid JSON in UTF-8; write JSON or NULL, or run with --validate-json=false",
		},
		{
			name: "invalid payload", kind: KindInvalidPayloadJSON,
			row:  func(r *binlog.OutboxRow) { r.Payload = []byte(`{"a":`) },
			want: "outbox row shop.outbox event_id=" + testEventID + " gtid=0-1-42: payload (5 bytes) is not valid JSON in UTF-8; write JSON or NULL, or run with --validate-json=false",
		},
		{
			name: "invalid headers", kind: KindInvalidHeaders,
			row:  func(r *binlog.OutboxRow) { r.Headers = []byte(`[]`) },
			want: "outbox row shop.outbox event_id=" + testEventID + ` gtid=0-1-42: headers column holds a JSON array; it must be NULL or a JSON object like {"key":"value"}`,
		},
		{
			name: "invalid topic", kind: KindInvalidTopic,
			row:  func(r *binlog.OutboxRow) { r.EventType = []byte("a b") },
			want: "outbox row shop.outbox event_id=" + testEventID + ` gtid=0-1-42: topic "outbox.event.a b" built from template "outbox.event.{event_type}" is not a legal Kafka topic name: character ' ' at offset 14 is not allowed (allowed: A-Z a-z 0-9 . _ -); fix the row values or the topic template`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := testRow()
			tt.row(row)
			rec, err := newRouter(t, nil).Route(row, testTxn())
			assert.Nil(t, rec)
			re := requireKind(t, err, tt.kind)
			assert.Equal(t, tt.want, err.Error())
			assert.Equal(t, "shop.outbox", re.Table)
			assert.Equal(t, "0-1-42", re.GTID)
			assert.Equal(t, string(row.EventID), re.EventID)
			assert.Equal(t, string(tt.kind), strings.ToLower(string(tt.kind)))

			// errors.Is survives further wrapping, and no other sentinel matches.
			wrapped := fmt.Errorf("routing: %w", err)
			for k, s := range sentinels {
				assert.Equal(t, k == tt.kind, errors.Is(wrapped, s), "kind %s vs sentinel of %s", tt.kind, k)
			}
		})
	}
}

// The first failing check in the documented order is the one reported.
func TestRowErrorPrecedence(t *testing.T) {
	row := &binlog.OutboxRow{Database: "d", Table: "t", Payload: []byte("x"), Headers: []byte("x"), EventType: []byte(" ")}
	r := newRouter(t, nil)
	order := []struct {
		kind Kind
		fix  func()
	}{
		{KindNullEventID, func() { row.EventID = []byte("e") }},
		{KindInvalidEventID, func() { row.EventID = []byte(testEventID) }},
		{KindNullAggregateID, func() { row.AggregateID = []byte("k") }},
		{KindInvalidPayloadJSON, func() { row.Payload = []byte("{}") }},
		{KindInvalidTopic, func() { row.EventType = []byte("T") }},
		{KindInvalidHeaders, func() { row.Headers = []byte("{}") }},
	}
	for _, step := range order {
		_, err := r.Route(row, testTxn())
		requireKind(t, err, step.kind)
		step.fix()
	}
	_, err := r.Route(row, testTxn())
	require.NoError(t, err)

	row.EventType = nil
	_, err = r.Route(row, testTxn())
	requireKind(t, err, KindNullEventType)
}

func TestRowErrorDisplay(t *testing.T) {
	long := strings.Repeat("é", 80) // 160 bytes
	e := &RowError{Table: "d.t", EventID: long, Kind: KindInvalidEventID, Err: ErrInvalidEventID}
	msg := e.Error()
	assert.Contains(t, msg, "…(160 bytes)")
	assert.Contains(t, msg, "gtid=(none): event_id is not a UUID")
	assert.Less(t, len(msg), 200)

	e = &RowError{Table: "d.t", GTID: "u:1", EventID: "a\nb", Kind: KindInvalidEventID}
	assert.Equal(t, `outbox row d.t event_id="a\nb" gtid=u:1: invalid_event_id`, e.Error())

	// As a person reads them: 16 bytes that are not text as a UUID, other
	// bytes that are not text as hex, text quoted.
	for _, tt := range []struct{ in, want string }{
		{"\x6c\xcd\x78\x0c\xba\xba\x10\x26\x95\x64\x5b\x8c\x65\x60\x24\xdb", "6ccd780c-baba-1026-9564-5b8c656024db"},
		{"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", "00000000-0000-0000-0000-000000000001"},
		{"abcdefghijklmnop", "abcdefghijklmnop"},
		{"Caf\xe9", "0x436166e9"},
		{"é ü", `"é ü"`},
		{strings.Repeat("\xff", 60), "0x" + strings.Repeat("ff", 50) + "…(60 bytes)"},
	} {
		e := &RowError{Table: "d.t", GTID: "u:1", EventID: tt.in, Kind: KindInvalidEventID}
		assert.Equal(t, "outbox row d.t event_id="+tt.want+" gtid=u:1: invalid_event_id", e.Error(), "%q", tt.in)
	}
}

func TestTooLarge(t *testing.T) {
	err := TooLarge("shop.outbox", "0-1-42", "9b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b", "record for topic orders takes 300170 bytes in a record batch, over --max-message-bytes (1048576 bytes); raise --max-message-bytes")
	if !errors.Is(err, ErrRecordTooLarge) || err.Kind != KindRecordTooLarge {
		t.Fatalf("TooLarge: kind %q, Is(ErrRecordTooLarge) %v", err.Kind, errors.Is(err, ErrRecordTooLarge))
	}
	want := "outbox row shop.outbox event_id=9b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5b gtid=0-1-42: record for topic orders takes 300170 bytes in a record batch, over --max-message-bytes (1048576 bytes); raise --max-message-bytes"
	if err.Error() != want {
		t.Errorf("TooLarge:\n %s\nwant\n %s", err, want)
	}
}

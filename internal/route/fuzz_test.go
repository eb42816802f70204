package route

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

// FuzzTemplate parses arbitrary templates. New must never panic; when it
// succeeds, Record with arbitrary field values must give either an
// invalid_topic error or the naively expanded topic, which must be legal.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{
		DefaultTopicTemplate, "{aggregate_type}.{event_type}", "{database}.{table}", "x", "{", "}", "{}", "{{event_type}}",
		"a{event_type", "a}b", "{event_type}{event_type}", ".", "..", "a b", "é{table}", strings.Repeat("a", 249),
	} {
		f.Add(s, []byte("OrderCreated"), []byte("Order"), "shop", "outbox")
	}
	f.Add("{event_type}", []byte("."), []byte(nil), "d", "t")
	f.Add("{aggregate_type}", []byte("E"), []byte{}, "d", "t")
	f.Add("{event_type}{aggregate_type}", []byte("."), []byte("."), "d", "t")
	f.Fuzz(func(t *testing.T, tmpl string, eventType, aggType []byte, db, table string) {
		r, err := New(Config{TopicTemplate: tmpl})
		if err != nil {
			if !errors.Is(err, ErrInvalidTemplate) {
				t.Fatalf("New(%q): error does not wrap ErrInvalidTemplate: %v", tmpl, err)
			}
			return
		}
		if len(eventType) == 0 {
			eventType = []byte("E")
		}
		row := &binlog.OutboxRow{
			Database: db, Table: table, EventID: []byte("e"), AggregateID: []byte("k"),
			EventType: eventType, AggregateType: aggType,
		}
		if tmpl == "" {
			tmpl = DefaultTopicTemplate
		}
		want, wantOK := naiveTopic(tmpl, row)
		for range 2 { // fresh, then cached
			rec, err := r.Route(row, &binlog.Txn{})
			if err != nil {
				var re *RowError
				if !errors.As(err, &re) || re.Kind != KindInvalidTopic || !errors.Is(err, ErrInvalidTopic) {
					t.Fatalf("template %q: want an invalid_topic *RowError, got %T %v", tmpl, err, err)
				}
				if wantOK {
					t.Fatalf("template %q: error %v for legal topic %q", tmpl, err, want)
				}
				continue
			}
			if err := ValidTopic(rec.Topic); err != nil {
				t.Fatalf("template %q gave illegal topic: %v", tmpl, err)
			}
			if !wantOK || rec.Topic != want {
				t.Fatalf("template %q: topic %q, want %q (legal %v)", tmpl, rec.Topic, want, wantOK)
			}
		}
	})
}

// naiveTopic expands a template New accepted by plain string replacement.
func naiveTopic(tmpl string, row *binlog.OutboxRow) (string, bool) {
	vals := map[string]string{
		"{event_type}": string(row.EventType), "{aggregate_type}": string(row.AggregateType),
		"{database}": row.Database, "{table}": row.Table,
	}
	var b strings.Builder
	for tmpl != "" {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			break
		}
		b.WriteString(tmpl[:i])
		j := strings.IndexByte(tmpl, '}')
		v := vals[tmpl[i:j+1]]
		if v == "" {
			return "", false
		}
		b.WriteString(v)
		tmpl = tmpl[j+1:]
	}
	return b.String(), ValidTopic(b.String()) == nil
}

// FuzzRecord feeds arbitrary bytes into every field. Record must never
// panic, its errors must be *RowError with a known kind, and a record must
// keep the contract: key, value, header order, and headers-column members as
// encoding/json reads them.
func FuzzRecord(f *testing.F) {
	f.Add(uint16(0), testEventID, "order-42", "OrderCreated", "Order", `{"id":42}`, "3", "00-ab-cd-01", `{"a":"b","n":1}`, "shop", "outbox", "0-1-42", true, true)
	f.Add(uint16(0xffff), "", "", "", "", "", "", "", "", "", "", "", false, false)
	f.Add(uint16(0), "e", "注文🦄", "E", "", "\xff", "", "", ` {"\u00e9\ud83d\ude00":[ 1, {"x" :"y"} ],"e":"\ud800\"\\"} `, "d", "t", "u:tag:7", false, false)
	f.Add(uint16(0), "e", "k", "E", "", "", "", "", `{"a":{"b":[]},"c":-0.5e+10,"d":[],"e":{},"f":""}`, "d", "t", "", false, false)
	f.Add(uint16(0), "e", "k", "E", "", "", "", "", `[1]`, "d", "t", "", false, false)
	f.Fuzz(func(t *testing.T, nulls uint16, eventID, aggID, eventType, aggType, payload, schemaVersion, traceparent, headers, db, table, gtid string, validate, requireUUID bool) {
		field := func(bit int, s string) []byte {
			if nulls&(1<<bit) != 0 {
				return nil
			}
			return []byte(s)
		}
		row := &binlog.OutboxRow{
			Database: db, Table: table,
			EventID: field(0, eventID), AggregateID: field(1, aggID), EventType: field(2, eventType),
			AggregateType: field(3, aggType), Payload: field(4, payload), SchemaVersion: field(5, schemaVersion),
			Traceparent: field(6, traceparent), Headers: field(7, headers),
		}
		if nulls&(1<<8) == 0 {
			row.CreatedAt = time.Unix(int64(nulls), 0)
		}
		txn := &binlog.Txn{GTID: gtid, Time: time.Unix(1, 0)}
		tmpl := []string{DefaultTopicTemplate, "{aggregate_type}.{event_type}", "{database}.{table}", "fixed"}[nulls>>9&3]
		r, err := New(Config{TopicTemplate: tmpl, ValidateJSON: validate, RequireUUID: requireUUID})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Route(row, txn)
		if err != nil {
			var re *RowError
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *RowError: %v", err, err)
			}
			if !errors.Is(err, sentinels[re.Kind]) || re.Table != db+"."+table || re.GTID != gtid {
				t.Fatalf("bad RowError %+v", re)
			}
			if rec != nil {
				t.Fatal("record with error")
			}
			_ = err.Error()
			return
		}
		checkRecord(t, row, txn, rec)
	})
}

func checkRecord(t *testing.T, row *binlog.OutboxRow, txn *binlog.Txn, rec *kgo.Record) {
	t.Helper()
	if len(row.EventID) == 0 || len(row.AggregateID) == 0 || len(row.EventType) == 0 {
		t.Fatal("record for a row missing a required column")
	}
	if !bytes.Equal(rec.Key, row.AggregateID) || !bytes.Equal(rec.Value, row.Payload) || (rec.Value == nil) != (row.Payload == nil) {
		t.Fatalf("key/value changed: %q %q", rec.Key, rec.Value)
	}
	if err := ValidTopic(rec.Topic); err != nil {
		t.Fatal(err)
	}
	want := []kgo.RecordHeader{{Key: "id", Value: row.EventID}, {Key: "event_type", Value: row.EventType}}
	for _, o := range []struct {
		k string
		v []byte
	}{{"aggregate_type", row.AggregateType}, {"schema_version", row.SchemaVersion}, {"traceparent", row.Traceparent}} {
		if o.v != nil {
			want = append(want, kgo.RecordHeader{Key: o.k, Value: o.v})
		}
	}
	n := len(want)
	if len(rec.Headers) < n+1 || len(rec.Headers) != cap(rec.Headers) {
		t.Fatalf("headers %q", rec.Headers)
	}
	for i := range want {
		if rec.Headers[i].Key != want[i].Key || !bytes.Equal(rec.Headers[i].Value, want[i].Value) {
			t.Fatalf("header %d: %q, want %q", i, rec.Headers[i], want[i])
		}
	}
	if last := rec.Headers[len(rec.Headers)-1]; last.Key != "binlog_gtid" || string(last.Value) != txn.GTID {
		t.Fatalf("last header %q", last)
	}
	extra := rec.Headers[n : len(rec.Headers)-1]
	if row.Headers == nil {
		if len(extra) != 0 {
			t.Fatalf("headers without a headers column: %q", extra)
		}
	} else if utf8.Valid(row.Headers) {
		ref, err := referenceHeaders(row.Headers)
		if err != nil {
			t.Fatalf("accepted headers column %q that encoding/json rejects: %v", row.Headers, err)
		}
		if len(ref) != len(extra) {
			t.Fatalf("headers column %q: got %q, want %q", row.Headers, extra, ref)
		}
		for i := range ref {
			if ref[i].Key != extra[i].Key || !bytes.Equal(ref[i].Value, extra[i].Value) {
				t.Fatalf("headers column %q: got %q, want %q", row.Headers, extra, ref)
			}
		}
	}
	ts := row.CreatedAt
	if ts.IsZero() {
		ts = txn.Time
	}
	if !rec.Timestamp.Equal(ts) {
		t.Fatalf("timestamp %v, want %v", rec.Timestamp, ts)
	}
}

// referenceHeaders reads a headers column with encoding/json.
func referenceHeaders(doc []byte) ([]kgo.RecordHeader, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var out []kgo.RecordHeader
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		var val []byte
		if raw[0] == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			val = []byte(s)
		} else {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, err
			}
			val = b.Bytes()
		}
		out = append(out, kgo.RecordHeader{Key: tok.(string), Value: val})
	}
	return out, nil
}

// FuzzHeaders compares the headers-column reader with encoding/json.
func FuzzHeaders(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { "a" : "b" } `, `{"a":1,"a":2}`, `{"n":-0.5e+10,"t":true,"f":false,"z":null}`,
		`{"x":[ 1, [ ], { } , {"y" : [ "a b" , "\"}" ] } ]}`, `{"\u00e9\ud83d\ude00":"\ud800\udc00\ud800x\\\/\b\f\n\r\t"}`,
		`{"k":"注文🦄"}`, `[]`, `"s"`, `null`, `{"a":}`, `{"a":"\u12"}`,
	} {
		f.Add([]byte(s))
	}
	r := newRouter(f, nil)
	f.Fuzz(func(t *testing.T, doc []byte) {
		row := testRow()
		row.Headers = doc
		rec, err := r.Route(row, testTxn())
		if err != nil {
			requireKind(t, err, KindInvalidHeaders)
			if ref, refErr := referenceHeaders(doc); refErr == nil && json.Valid(doc) {
				t.Fatalf("rejected %q that encoding/json reads as %q: %v", doc, ref, err)
			}
			return
		}
		checkRecord(t, row, testTxn(), rec)
	})
}

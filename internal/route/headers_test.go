package route

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/binlog"
)

func h(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }

func TestHeaders(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name string
		row  func(*binlog.OutboxRow)
		want []kgo.RecordHeader
	}{
		{
			name: "required only",
			want: []kgo.RecordHeader{h("id", testEventID), h("event_type", "OrderCreated"), h("binlog_gtid", "0-1-42")},
		},
		{
			name: "all columns",
			row: func(r *binlog.OutboxRow) {
				r.AggregateType = []byte("Order")
				r.SchemaVersion = []byte("3")
				r.Traceparent = []byte(tp)
				r.Headers = []byte(`{"tenant":"acme","retries":3,"price":-1.50e2,"ok":true,"none":null,"tags":["a","b"],"meta":{"a":{"b":[1,2]}}}`)
			},
			want: []kgo.RecordHeader{
				h("id", testEventID), h("event_type", "OrderCreated"), h("aggregate_type", "Order"),
				h("schema_version", "3"), h("traceparent", tp),
				h("tenant", "acme"), h("retries", "3"), h("price", "-1.50e2"), h("ok", "true"), h("none", "null"),
				h("tags", `["a","b"]`), h("meta", `{"a":{"b":[1,2]}}`),
				h("binlog_gtid", "0-1-42"),
			},
		},
		{
			name: "some optional columns",
			row:  func(r *binlog.OutboxRow) { r.Traceparent = []byte(tp) },
			want: []kgo.RecordHeader{h("id", testEventID), h("event_type", "OrderCreated"), h("traceparent", tp), h("binlog_gtid", "0-1-42")},
		},
		{
			name: "empty optional columns are kept",
			row:  func(r *binlog.OutboxRow) { r.AggregateType, r.SchemaVersion = []byte{}, []byte{} },
			want: []kgo.RecordHeader{h("id", testEventID), h("event_type", "OrderCreated"), h("aggregate_type", ""), h("schema_version", ""), h("binlog_gtid", "0-1-42")},
		},
		{
			name: "headers column whitespace, escapes, duplicates, document order",
			row: func(r *binlog.OutboxRow) {
				r.Headers = []byte(" {\n \"z\" : \"1\" ,\t\"a\":[ 1 , { \"k\" : \"v w\" } ] ,\"z\":\"2\",\"esc\\\"key\":\"line\\nnext \\u00e9 \\ud83d\\ude00 \\/ \\\\\",\"\":\"\",\"lone\":\"\\ud800x\"}\r\n")
			},
			want: []kgo.RecordHeader{
				h("id", testEventID), h("event_type", "OrderCreated"),
				h("z", "1"), h("a", `[1,{"k":"v w"}]`), h("z", "2"), h("esc\"key", "line\nnext é 😀 / \\"), h("", ""),
				h("lone", "\uFFFDx"),
				h("binlog_gtid", "0-1-42"),
			},
		},
		{
			name: "reserved names in the headers column are extra headers",
			row:  func(r *binlog.OutboxRow) { r.Headers = []byte(`{"id":"spoof","binlog_gtid":"x"}`) },
			want: []kgo.RecordHeader{h("id", testEventID), h("event_type", "OrderCreated"), h("id", "spoof"), h("binlog_gtid", "x"), h("binlog_gtid", "0-1-42")},
		},
		{
			name: "empty object",
			row:  func(r *binlog.OutboxRow) { r.Headers = []byte(" { } ") },
			want: []kgo.RecordHeader{h("id", testEventID), h("event_type", "OrderCreated"), h("binlog_gtid", "0-1-42")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := testRow()
			if tt.row != nil {
				tt.row(row)
			}
			rec, err := newRouter(t, nil).Route(row, testTxn())
			require.NoError(t, err)
			assert.Equal(t, tt.want, rec.Headers)
			assert.Equal(t, len(rec.Headers), cap(rec.Headers), "headers slice must have exact capacity")
		})
	}
}

// Header values alias the row unless they had to be unescaped or compacted.
func TestHeaderValuesAliasRow(t *testing.T) {
	row := testRow()
	row.AggregateType = []byte("Order")
	row.Headers = []byte(`{"k":"v","n":12}`)
	rec, err := newRouter(t, nil).Route(row, testTxn())
	require.NoError(t, err)
	assert.Same(t, &row.EventID[0], &rec.Headers[0].Value[0])
	assert.Same(t, &row.AggregateType[0], &rec.Headers[2].Value[0])
	assert.Same(t, &row.Headers[6], &rec.Headers[3].Value[0])
	assert.Same(t, &row.Headers[13], &rec.Headers[4].Value[0])
}

func TestInvalidHeaders(t *testing.T) {
	tests := []struct {
		doc string
		msg string
	}{
		{``, "headers column is not valid JSON"},
		{`{"a":1`, "not valid JSON"},
		{`{"a":1}x`, "not valid JSON"},
		{`{'a':1}`, "not valid JSON"},
		{`[{"a":"b"}]`, "headers column holds a JSON array; it must be NULL or a JSON object"},
		{`"a"`, "JSON string"},
		{` null `, "JSON null"},
		{`true`, "JSON boolean"},
		{`-1`, "JSON number"},
	}
	for _, tt := range tests {
		t.Run(tt.doc, func(t *testing.T) {
			row := testRow()
			row.Headers = []byte(tt.doc)
			r := newRouter(t, nil)
			_, err := r.Route(row, testTxn())
			re := requireKind(t, err, KindInvalidHeaders)
			assert.Contains(t, re.Error(), tt.msg)
			// The router is still usable and holds no references to the row.
			row.Headers = nil
			_, err = r.Route(row, testTxn())
			require.NoError(t, err)
		})
	}
}

// The public inbox package repeats the router's header names; they must
// stay the same.
func TestInboxHeaderNames(t *testing.T) {
	for _, c := range []struct{ inbox, route string }{
		{inbox.HeaderID, HeaderID},
		{inbox.HeaderEventType, HeaderEventType},
		{inbox.HeaderAggregateType, HeaderAggregateType},
		{inbox.HeaderCEID, HeaderCEID},
		{inbox.HeaderCEType, HeaderCEType},
		{inbox.HeaderCEAggregateType, HeaderCEPrefix + ExtAggregateType},
		{inbox.HeaderContentType, HeaderContentType},
		{inbox.ContentTypeCloudEvents, ContentTypeCloudEvents},
	} {
		if c.inbox != c.route {
			t.Errorf("inbox header %q, router header %q", c.inbox, c.route)
		}
	}
}

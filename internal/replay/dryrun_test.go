package replay

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/route"
)

func TestReplayDryRunLine(t *testing.T) {
	ts := time.Date(2024, 5, 1, 12, 0, 0, 123456789, time.UTC)
	rec := &kgo.Record{
		Topic: "outbox.event.OrderCreated",
		Key:   []byte("order-7"),
		Headers: []kgo.RecordHeader{
			{Key: "id", Value: []byte("5b8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b")},
			{Key: "tenant", Value: []byte("a")},
			{Key: "tenant", Value: []byte("b")},
			{Key: "binlog_gtid", Value: []byte("0-1-42")},
		},
		Timestamp: ts,
	}
	for _, tc := range []struct {
		name       string
		value      []byte
		partitions int
		want       string
	}{
		{"tombstone, no topic", nil, 0,
			`{"topic":"outbox.event.OrderCreated","partition":null,"key":"order-7","headers":[{"key":"id","value":"5b8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b"},{"key":"tenant","value":"a"},{"key":"tenant","value":"b"},{"key":"binlog_gtid","value":"0-1-42"}],"value":null,"timestamp":"2024-05-01T12:00:00.123Z"}`},
		{"value, 6 partitions", []byte(`{"a":"<b>"}`), 6,
			`{"topic":"outbox.event.OrderCreated","partition":` + strconv.Itoa(route.PartitionFor([]byte("order-7"), 6)) + `,"key":"order-7","headers":[{"key":"id","value":"5b8e2b1a-3c4d-4e5f-8a9b-0c1d2e3f4a5b"},{"key":"tenant","value":"a"},{"key":"tenant","value":"b"},{"key":"binlog_gtid","value":"0-1-42"}],"value":"{\"a\":\"\u003cb\u003e\"}","timestamp":"2024-05-01T12:00:00.123Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := *rec
			r.Value = tc.value
			got, err := json.Marshal(NewLine(&r, tc.partitions))
			if err != nil {
				t.Fatal(err)
			}
			if normalize(t, got) != normalize(t, []byte(tc.want)) {
				t.Errorf("line\n %s\nwant\n %s", got, tc.want)
			}
		})
	}
}

// normalize re-encodes a JSON document so that equal documents compare
// equal as strings.
func normalize(t *testing.T, doc []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

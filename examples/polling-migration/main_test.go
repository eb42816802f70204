package main

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/route"
)

// TestRecordAsTheRouter: the relay's record of a row has the topic, key,
// value, timestamp and partition the router gives the same row, and the
// router's headers up to those the relay cannot know (binlog_gtid).
func TestRecordAsTheRouter(t *testing.T) {
	created := time.Date(2026, 12, 5, 11, 0, 0, 123456000, time.UTC)
	null := sql.NullString{}
	text := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	for _, tc := range []struct {
		name, template string
		aggType        sql.NullString
		payload        sql.NullString
	}{
		{"default template", defaultTopicTemplate, text("order"), text(`{"seq":1}`)},
		{"aggregate type in the topic", "shop.{aggregate_type}.{event_type}", text("order"), text(`{"seq":2}`)},
		{"null aggregate type", route.DefaultTopicTemplate, null, text(`{}`)},
		{"null payload", route.DefaultTopicTemplate, text("order"), null},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &relay{cfg: config{topic: tc.template}}
			const eventID = "0193a5b2-7c1e-7b3a-9f10-5b2c3d4e5f60"
			got, err := r.record(eventID, tc.aggType, "order-17", "OrderCreated", tc.payload,
				fmt.Sprintf("%d.123456", created.Unix()))
			require.NoError(t, err)

			cfg := route.DefaultConfig()
			if tc.template != defaultTopicTemplate {
				cfg.TopicTemplate = tc.template
			}
			router, err := route.New(cfg)
			require.NoError(t, err)
			row := &binlog.OutboxRow{Database: "shop", Table: "outbox", EventID: []byte(eventID), AggregateID: []byte("order-17"),
				EventType: []byte("OrderCreated"), CreatedAt: created}
			if tc.aggType.Valid {
				row.AggregateType = []byte(tc.aggType.String)
			}
			if tc.payload.Valid {
				row.Payload = []byte(tc.payload.String)
			}
			want, err := router.Route(row, &binlog.Txn{GTID: "0-1-42"})
			require.NoError(t, err)

			assert.Equal(t, want.Topic, got.Topic)
			assert.Equal(t, want.Key, got.Key)
			assert.Equal(t, want.Value, got.Value)
			assert.True(t, want.Timestamp.Equal(got.Timestamp), "timestamp %s, router %s", got.Timestamp, want.Timestamp)
			require.Len(t, want.Headers, len(got.Headers)+1)
			assert.Equal(t, want.Headers[:len(got.Headers)], got.Headers)
			assert.Equal(t, route.HeaderBinlogGTID, want.Headers[len(got.Headers)].Key)
		})
	}
}

// TestPartitionerAsTheRouter: the relay's partitioner puts every key on
// the partition the router's does.
func TestPartitionerAsTheRouter(t *testing.T) {
	p := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for _, n := range []int{1, 3, 7, 64} {
		for i := range 1000 {
			key := []byte(fmt.Sprintf("agg-%d", i))
			assert.Equal(t, route.PartitionFor(key, n), p.Partition(&kgo.Record{Key: key}, n), "key %s, %d partitions", key, n)
		}
	}
}

func TestUnixMicros(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1733396400":        time.Unix(1733396400, 0),
		"1733396400.5":      time.Unix(1733396400, 500_000_000),
		"1733396400.000001": time.Unix(1733396400, 1000),
		"1733396400.123456": time.Unix(1733396400, 123_456_000),
	} {
		got, err := unixMicros(in)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%s: %s, want %s", in, got, want)
	}
	_, err := unixMicros("NULL")
	assert.Error(t, err)
}

func TestQuoteTable(t *testing.T) {
	for in, want := range map[string]string{"outbox": "`outbox`", "shop.outbox": "`shop`.`outbox`"} {
		got, err := quoteTable(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	for _, bad := range []string{"", "a.b.c", "shop.", "out`box"} {
		_, err := quoteTable(bad)
		assert.Error(t, err, bad)
	}
}

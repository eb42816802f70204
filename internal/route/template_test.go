package route

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

func TestTopicTemplate(t *testing.T) {
	tests := []struct {
		template string
		row      func(*binlog.OutboxRow)
		want     string
	}{
		{"outbox.event.{event_type}", nil, "outbox.event.OrderCreated"},
		{"{event_type}", nil, "OrderCreated"},
		{"{aggregate_type}", nil, "Order"},
		{"{database}", nil, "shop"},
		{"{table}", nil, "outbox"},
		{"cdc.{database}.{table}.{aggregate_type}.{event_type}", nil, "cdc.shop.outbox.Order.OrderCreated"},
		{"{aggregate_type}-{aggregate_type}", nil, "Order-Order"},
		{"{aggregate_type}{event_type}", nil, "OrderOrderCreated"},
		{"fixed_topic", nil, "fixed_topic"},
		{"fixed_topic", func(r *binlog.OutboxRow) { r.EventType = []byte("a b") }, "fixed_topic"},
		{"x.{event_type}", func(r *binlog.OutboxRow) { r.EventType = []byte("order.created_v2-beta") }, "x.order.created_v2-beta"},
		{"{database}_{table}", func(r *binlog.OutboxRow) { r.Database, r.Table = "db-1", "out_box" }, "db-1_out_box"},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			row := testRow()
			row.AggregateType = []byte("Order")
			if tt.row != nil {
				tt.row(row)
			}
			r := newRouter(t, func(c *Config) { c.TopicTemplate = tt.template })
			for range 2 { // the second call is served from the cache
				rec, err := r.Route(row, testTxn())
				require.NoError(t, err)
				assert.Equal(t, tt.want, rec.Topic)
			}
		})
	}
}

// Values of different fields must not collide in the topic cache.
func TestTopicCacheKeys(t *testing.T) {
	r := newRouter(t, func(c *Config) { c.TopicTemplate = "{aggregate_type}{event_type}" })
	for _, tc := range []struct{ agg, typ, want string }{
		{"ab", "c", "abc"},
		{"a", "bc", "abc"},
		{"ab", "c", "abc"},
		{"x", "y", "xy"},
	} {
		row := testRow()
		row.AggregateType, row.EventType = []byte(tc.agg), []byte(tc.typ)
		rec, err := r.Route(row, testTxn())
		require.NoError(t, err)
		assert.Equal(t, tc.want, rec.Topic)
	}
	r = newRouter(t, func(c *Config) { c.TopicTemplate = "{database}.{table}" })
	for _, tc := range []struct{ db, table string }{{"a", "b"}, {"a", "c"}, {"b", "b"}} {
		row := testRow()
		row.Database, row.Table = tc.db, tc.table
		rec, err := r.Route(row, testTxn())
		require.NoError(t, err)
		assert.Equal(t, tc.db+"."+tc.table, rec.Topic)
	}
}

func TestTemplateConfigErrors(t *testing.T) {
	tests := []struct {
		template string
		msg      string
	}{
		{"outbox.{eventtype}", `unknown placeholder "{eventtype}" at offset 7`},
		{"outbox.{}", `unknown placeholder "{}"`},
		{"outbox.{EVENT_TYPE}", "unknown placeholder"},
		{"outbox.{event_type", `"{" at offset 7 has no closing "}"`},
		{"outbox.{event_{type}}", `"{" at offset 7 has no closing "}"`},
		{"outbox.event_type}", `"}" at offset 17 has no opening "{"`},
		{"{", "no closing"},
		{"}", "no opening"},
		{"outbox event.{event_type}", `character ' ' at offset 6 is not allowed`},
		{"outbox/{event_type}", `character '/' at offset 6`},
		{"événement.{event_type}", `character 'é' at offset 0`},
		{".", `"." and ".." are reserved`},
		{"..", "reserved"},
		{strings.Repeat("a", 250), "longer than"},
		{strings.Repeat("a", 250) + "{event_type}", "longer than the 249 Kafka allows"},
	}
	for _, tt := range tests {
		t.Run(tt.template, func(t *testing.T) {
			_, err := New(Config{TopicTemplate: tt.template})
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidTemplate)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Equal(t, err, Config{TopicTemplate: tt.template}.Validate())
		})
	}
}

func TestIllegalTopicIsRowError(t *testing.T) {
	tests := []struct {
		name     string
		template string
		row      func(*binlog.OutboxRow)
		msg      string
	}{
		{"space", "", func(r *binlog.OutboxRow) { r.EventType = []byte("Order Created") }, `character ' ' at offset 18`},
		{"slash", "", func(r *binlog.OutboxRow) { r.EventType = []byte("a/b") }, "character '/'"},
		{"control", "", func(r *binlog.OutboxRow) { r.EventType = []byte("a\x00b") }, `character '\x00'`},
		{"cjk", "", func(r *binlog.OutboxRow) { r.EventType = []byte("注文") }, "character '注'"},
		{"invalid utf8", "", func(r *binlog.OutboxRow) { r.EventType = []byte("a\xffb") }, "byte 0xff"},
		{"too long", "", func(r *binlog.OutboxRow) { r.EventType = []byte(strings.Repeat("x", 237)) }, "250 characters"},
		{"dot", "{event_type}", func(r *binlog.OutboxRow) { r.EventType = []byte(".") }, "reserved"},
		{"dotdot", "{event_type}", func(r *binlog.OutboxRow) { r.EventType = []byte("..") }, "reserved"},
		{"NULL aggregate_type", "{aggregate_type}.x", func(r *binlog.OutboxRow) { r.AggregateType = nil }, "uses {aggregate_type} but aggregate_type is NULL"},
		{"empty aggregate_type", "{aggregate_type}", func(r *binlog.OutboxRow) { r.AggregateType = []byte{} }, "aggregate_type is empty"},
		{"bad database", "{database}", func(r *binlog.OutboxRow) { r.Database = "my db" }, "character ' '"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := testRow()
			row.AggregateType = []byte("Order")
			tt.row(row)
			r := newRouter(t, func(c *Config) { c.TopicTemplate = tt.template })
			for range 2 { // errors are not cached away
				_, err := r.Route(row, testTxn())
				re := requireKind(t, err, KindInvalidTopic)
				assert.Contains(t, re.Error(), tt.msg)
				assert.Contains(t, re.Error(), "outbox row "+row.Database+".outbox event_id="+testEventID+" gtid=0-1-42: ")
			}
		})
	}
}

func TestValidTopic(t *testing.T) {
	valid := []string{"a", "A-Z_0.9", "outbox.event.OrderCreated", "...", "_", strings.Repeat("x", 249)}
	for _, name := range valid {
		assert.NoError(t, ValidTopic(name), name)
	}
	invalid := []string{"", ".", "..", "a b", "a/b", "a:b", "a\nb", "ä", "注文", "🦄", strings.Repeat("x", 250)}
	for _, name := range invalid {
		err := ValidTopic(name)
		assert.ErrorIs(t, err, ErrInvalidTopic, "%q", name)
	}
	assert.EqualError(t, ValidTopic("a b"), `invalid Kafka topic name "a b": character ' ' at offset 1 is not allowed (allowed: A-Z a-z 0-9 . _ -)`)
	assert.EqualError(t, ValidTopic(""), `invalid Kafka topic name "": the name is empty`)
}

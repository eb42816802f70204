package binlog

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// A TABLE_MAP as MariaDB 10.11 logs it with FULL metadata for
// (event_id UUID, aggregate_id BINARY(8), payload VARCHAR(50) latin1,
// event_type VARCHAR(20) utf16, aggregate_type VARCHAR(20) utf8mb4).
func fullMetaTable() *replication.TableMapEvent {
	return &replication.TableMapEvent{ColumnCount: 5,
		ColumnType:     []byte{gomysql.MYSQL_TYPE_STRING, gomysql.MYSQL_TYPE_STRING, gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VARCHAR},
		ColumnMeta:     []uint16{0xfe10, 0xfe08, 50, 80, 80},
		DefaultCharset: []uint64{63, 2, 8, 3, 54, 4, 45},
	}
}

func TestValueConversions(t *testing.T) {
	l := schema.Layout{EventID: 0, AggregateID: 1, Payload: 2, EventType: 3, AggregateType: 4,
		CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 5}
	names := []string{"event_id", "aggregate_id", "payload", "event_type", "aggregate_type"}
	for _, tt := range []struct {
		order UUIDBinary
		id    []byte
		want  string
	}{
		{UUIDStandard, []byte("\x6c\xcd\x78\x0c\xba\xba\x10\x26\x95\x64\x5b\x8c\x65\x60\x24\xdb"), "6ccd780c-baba-1026-9564-5b8c656024db"},
		// UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db', 1)
		{UUIDSwapped, []byte("\x10\x26\xba\xba\x6c\xcd\x78\x0c\x95\x64\x5b\x8c\x65\x60\x24\xdb"), "6ccd780c-baba-1026-9564-5b8c656024db"},
		// trailing zero bytes stripped by the binlog
		{UUIDStandard, []byte("\x6c\xcd\x78\x0c\xba\xba\x10\x26\x95\x64"), "6ccd780c-baba-1026-9564-000000000000"},
	} {
		convs, err := valueConvs(fullMetaTable(), l, names, tt.order)
		require.NoError(t, err)
		tbl := &table{convs: convs}
		r := OutboxRow{EventID: tt.id, AggregateID: []byte{1, 2}, Payload: []byte("{\"n\":\"Caf\xe9\"}"),
			EventType: []byte("\x00A\x00b"), AggregateType: []byte("order")}
		require.NoError(t, tbl.convert(&r))
		assert.Equal(t, tt.want, string(r.EventID))
		assert.Equal(t, []byte{1, 2, 0, 0, 0, 0, 0, 0}, r.AggregateID, "BINARY(8) padded back")
		assert.Equal(t, `{"n":"Café"}`, string(r.Payload), "latin1 to UTF-8")
		assert.Equal(t, "Ab", string(r.EventType), "utf16 to UTF-8")
		assert.Equal(t, "order", string(r.AggregateType))
	}
	r := OutboxRow{AggregateType: []byte("\xff")}
	convs, err := valueConvs(fullMetaTable(), l, names, UUIDStandard)
	require.NoError(t, err)
	assert.ErrorContains(t, (&table{convs: convs}).convert(&r), "aggregate_type (utf8mb4) holds bytes that are not valid UTF-8")

	tm := fullMetaTable()
	tm.DefaultCharset = []uint64{63, 2, 10} // swe7
	_, err = valueConvs(tm, l, names, UUIDStandard)
	assert.ErrorContains(t, err, "column payload has character set swe7")
}

package binlog

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// jsonb encodes values in MySQL's binary JSON format (sql-common/json_binary.h):
// small objects and arrays, int16 and int32, doubles, strings and literals.
// Object keys must be given in the order MySQL stores them: by length,
// then bytewise.
type jsonb interface{ typ() byte }

type (
	jObject []jMember
	jMember struct {
		key string
		val jsonb
	}
	jArray  []jsonb
	jString string
	jInt    int32
	jDouble float64
	jLit    byte // 0 null, 1 true, 2 false
)

func (jObject) typ() byte { return 0x00 }
func (jArray) typ() byte  { return 0x02 }
func (jLit) typ() byte    { return 0x04 }
func (v jInt) typ() byte {
	if v >= math.MinInt16 && v <= math.MaxInt16 {
		return 0x05
	}
	return 0x07
}
func (jDouble) typ() byte { return 0x0b }
func (jString) typ() byte { return 0x0c }

// jsonDoc is a whole document: its type byte and value.
func jsonDoc(v jsonb) []byte { return append([]byte{v.typ()}, jsonValue(v)...) }

func jsonValue(v jsonb) []byte {
	switch x := v.(type) {
	case jString:
		n := len(x)
		var out []byte
		for {
			if n < 0x80 {
				out = append(out, byte(n))
				break
			}
			out = append(out, byte(n&0x7f|0x80))
			n >>= 7
		}
		return append(out, x...)
	case jInt:
		if x.typ() == 0x05 {
			return binary.LittleEndian.AppendUint16(nil, uint16(x))
		}
		return binary.LittleEndian.AppendUint32(nil, uint32(x))
	case jDouble:
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(float64(x)))
	case jLit:
		return []byte{byte(x)}
	case jArray:
		var members []jMember
		for _, e := range x {
			members = append(members, jMember{val: e})
		}
		return jsonContainer(members, false)
	case jObject:
		return jsonContainer(x, true)
	}
	panic("unknown JSON value")
}

// jsonContainer lays out a small object or array: count, size, the key
// entries (objects), the value entries, the keys, the values. Literals
// and 16-bit integers are inlined in their entries.
func jsonContainer(members []jMember, object bool) []byte {
	n := len(members)
	header := 4 + 4*n*btoi(object) + 3*n
	keysLen := 0
	for _, m := range members {
		keysLen += len(m.key)
	}
	var keys, vals []byte
	entries := make([]byte, 0, 3*n)
	keyEntries := make([]byte, 0, 4*n)
	off := header + keysLen
	koff := header
	for _, m := range members {
		if object {
			keyEntries = binary.LittleEndian.AppendUint16(keyEntries, uint16(koff))
			keyEntries = binary.LittleEndian.AppendUint16(keyEntries, uint16(len(m.key)))
			keys = append(keys, m.key...)
			koff += len(m.key)
		}
		entries = append(entries, m.val.typ())
		if t := m.val.typ(); t == 0x04 || t == 0x05 {
			entries = append(entries, jsonValue(m.val)...)
			if t == 0x04 {
				entries = append(entries, 0)
			}
			continue
		}
		entries = binary.LittleEndian.AppendUint16(entries, uint16(off+len(vals)))
		vals = append(vals, jsonValue(m.val)...)
	}
	out := binary.LittleEndian.AppendUint16(nil, uint16(n))
	out = binary.LittleEndian.AppendUint16(out, uint16(header+keysLen+len(vals)))
	out = append(out, keyEntries...)
	out = append(out, entries...)
	out = append(out, keys...)
	return append(out, vals...)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestReadFileMySQLJSON decodes MySQL 8's binary JSON columns (a JSON
// payload and headers) through go-mysql's parser on constructed binlog
// bytes, as no MySQL server runs here: the record value is the JSON text
// MySQL's SELECT prints (", " and ": " between members, keys in their
// stored order, strings escaped). The other columns of the same rows:
// a BIGINT UNSIGNED aggregate id above 2^63 and a DATETIME(6) created_at
// in the configured zone.
func TestReadFileMySQLJSON(t *testing.T) {
	b := newMySQLBinlog()
	b.gtid(1)
	b.query("BEGIN")
	const cols = 7
	tableID := binary.LittleEndian.AppendUint32(nil, xaTestTableID)
	tableID = append(tableID, 0, 0)
	body := append(append([]byte(nil), tableID...), 1, 0)
	body = append(body, 4)
	body = append(body, "shop"...)
	body = append(body, 0, 6)
	body = append(body, "outbox"...)
	body = append(body, 0, cols)
	body = append(body, gomysql.MYSQL_TYPE_STRING, gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_LONGLONG,
		gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_JSON, gomysql.MYSQL_TYPE_JSON, gomysql.MYSQL_TYPE_DATETIME2)
	meta := []byte{gomysql.MYSQL_TYPE_STRING, 144} // CHAR(36) utf8mb4: type and length, big-endian
	meta = binary.LittleEndian.AppendUint16(meta, 1020)
	meta = binary.LittleEndian.AppendUint16(meta, 1020)
	meta = append(meta, 4, 4, 6)
	body = append(body, byte(len(meta)))
	body = append(body, meta...)
	body = append(body, 0x70) // null bitmap: payload, headers, created_at nullable
	// binlog_row_metadata=FULL: signedness (the one numeric column
	// unsigned), default collation 255, column names.
	body = append(body, 1, 1, 0x80)
	body = append(body, 2, 3, 0xfc, 255, 0)
	var names []byte
	for _, n := range []string{"event_id", "aggregate_type", "aggregate_id", "event_type", "payload", "headers", "created_at"} {
		names = append(append(names, byte(len(n))), n...)
	}
	body = append(append(body, 4, byte(len(names))), names...)
	b.event(replication.TABLE_MAP_EVENT, body)

	payload := jObject{{"id", jInt(42)}, {"name", jString("Café \"Müller\"\n")}, {"tags", jArray{jString("a"), jLit(1), jLit(0), jInt(-70000)}},
		{"price", jDouble(12.5)}, {"nested", jObject{{"k", jArray{}}, {"empty", jObject{}}}}}
	headers := jObject{{"n", jInt(1)}, {"tenant", jString("<a&b>\u2028, x: y")}}
	type row struct {
		id, agg string
		aggID   uint64
		payload []byte // binary JSON; nil is NULL
	}
	rows := append(append([]byte(nil), tableID...), 1, 0)
	rows = binary.LittleEndian.AppendUint16(rows, 2)
	rows = append(rows, cols, 0x7f)
	for _, r := range []row{
		{"6ccd780c-baba-1026-9564-5b8c656024db", "order", math.MaxUint64, jsonDoc(payload)},
		{"0b7e8a52-2a5b-4c2e-9d55-7f6c1f1e0a01", "order", 1 << 63, jsonDoc(jArray{jDouble(-0.25), jString("注文"), jLit(0)})},
		{"0b7e8a52-2a5b-4c2e-9d55-7f6c1f1e0a02", "order", 7, nil},
	} {
		nulls := byte(0)
		if r.payload == nil {
			nulls = 0x30
		}
		rows = append(rows, nulls)
		rows = append(append(rows, byte(len(r.id))), r.id...)
		rows = append(append(rows, byte(len(r.agg)), 0), r.agg...)
		rows = binary.LittleEndian.AppendUint64(rows, r.aggID)
		rows = append(append(rows, 6, 0), "Placed"...)
		if r.payload != nil {
			rows = binary.LittleEndian.AppendUint32(rows, uint32(len(r.payload)))
			rows = append(rows, r.payload...)
			h := jsonDoc(headers)
			rows = binary.LittleEndian.AppendUint32(rows, uint32(len(h)))
			rows = append(rows, h...)
		}
		// DATETIME(6) 2026-03-01 12:34:56.789012: 5 bytes of packed
		// date and time, 3 of microseconds.
		ymd := int64((2026*13+3)<<5 | 1)
		hms := int64(12<<12 | 34<<6 | 56)
		packed := (ymd<<17|hms)<<0 + 0x8000000000
		rows = append(rows, byte(packed>>32), byte(packed>>24), byte(packed>>16), byte(packed>>8), byte(packed))
		micros := 789012
		rows = append(rows, byte(micros>>16), byte(micros>>8), byte(micros))
	}
	b.event(replication.WRITE_ROWS_EVENTv2, rows)
	b.event(replication.XID_EVENT, binary.LittleEndian.AppendUint64(nil, 9))

	path := filepath.Join(t.TempDir(), "binlog.000001")
	require.NoError(t, os.WriteFile(path, b.buf, 0o600))
	zone := time.FixedZone("+05:00", 5*3600)
	batches, err := readFileBatches(t, path, FileConfig{Flavor: gtid.MySQL, Tables: []schema.TableName{{Database: "shop", Table: "outbox"}},
		Columns: schema.DefaultColumns(), DatetimeZone: zone})
	require.NoError(t, err)
	var got []OutboxRow
	for _, bt := range batches {
		got = append(got, bt.Rows...)
	}
	require.Len(t, got, 3)
	assert.Equal(t, `{"id": 42, "name": "Café \"Müller\"\n", "tags": ["a", true, null, -70000], "price": 12.5, "nested": {"k": [], "empty": {}}}`, string(got[0].Payload))
	assert.Equal(t, "{\"n\": 1, \"tenant\": \"<a&b>\u2028, x: y\"}", string(got[0].Headers))
	assert.Equal(t, `[-0.25, "注文", null]`, string(got[1].Payload))
	assert.Nil(t, got[2].Payload, "NULL stays NULL")
	assert.Equal(t, "18446744073709551615", string(got[0].AggregateID))
	assert.Equal(t, "9223372036854775808", string(got[1].AggregateID))
	assert.Equal(t, "6ccd780c-baba-1026-9564-5b8c656024db", string(got[0].EventID))
	assert.True(t, time.Date(2026, 3, 1, 7, 34, 56, 789012000, time.UTC).Equal(got[0].CreatedAt), "DATETIME in +05:00: %v", got[0].CreatedAt)

	// Without a zone for the DATETIME the reader stops before the row.
	_, err = readFileBatches(t, path, FileConfig{Flavor: gtid.MySQL, Tables: []schema.TableName{{Database: "shop", Table: "outbox"}},
		Columns: schema.DefaultColumns()})
	require.ErrorIs(t, err, ErrUnmappable)
	assert.ErrorContains(t, err, "column created_at (the creation time) is a DATETIME")
}

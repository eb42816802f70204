package binlog

import (
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlog-router/binlog-router/internal/gtid"
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

var fiveColumns = schema.Layout{EventID: 0, AggregateID: 1, Payload: 2, EventType: 3, AggregateType: 4,
	CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 5}

var fiveNames = []string{"event_id", "aggregate_id", "payload", "event_type", "aggregate_type"}

func mariaOpts(order UUIDBinary) valueOptions {
	return valueOptions{flavor: gtid.MariaDB, uuid: order, zone: time.UTC}
}

func TestValueConversions(t *testing.T) {
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
		convs, zone, err := valueConvs(fullMetaTable(), fiveColumns, fiveNames, nil, mariaOpts(tt.order))
		require.NoError(t, err)
		assert.Nil(t, zone)
		tbl := &table{convs: convs}
		r := OutboxRow{EventID: tt.id, AggregateID: []byte{1, 2}, Payload: []byte("{\"n\":\"Caf\xe9\"}"),
			EventType: []byte("\x00A\xd8\x3d\xde\x00"), AggregateType: []byte("order")}
		require.NoError(t, tbl.convert(&r))
		assert.Equal(t, tt.want, string(r.EventID))
		assert.Equal(t, []byte{1, 2, 0, 0, 0, 0, 0, 0}, r.AggregateID, "BINARY(8) padded back")
		assert.Equal(t, `{"n":"Café"}`, string(r.Payload), "latin1 to UTF-8")
		assert.Equal(t, "A😀", string(r.EventType), "utf16 to UTF-8")
		assert.Equal(t, "order", string(r.AggregateType))
	}
	r := OutboxRow{AggregateType: []byte("\xff")}
	convs, _, err := valueConvs(fullMetaTable(), fiveColumns, fiveNames, nil, mariaOpts(UUIDStandard))
	require.NoError(t, err)
	assert.ErrorContains(t, (&table{convs: convs}).convert(&r), "aggregate_type (utf8mb4) holds bytes that are not valid UTF-8: 0xff")

	tm := fullMetaTable()
	tm.DefaultCharset = []uint64{63, 2, 13} // sjis
	_, _, err = valueConvs(tm, fiveColumns, fiveNames, nil, mariaOpts(UUIDStandard))
	assert.ErrorContains(t, err, "column payload (the payload) has character set sjis, which the router cannot convert to UTF-8")
	tm.DefaultCharset = []uint64{63, 2, 10, 2, 12345}
	_, _, err = valueConvs(tm, fiveColumns, fiveNames, nil, mariaOpts(UUIDStandard))
	assert.ErrorContains(t, err, "column payload (the payload): its collation id 12345 is not one the router knows")
}

// A collation id 0 is what a malformed table map holds, not a column's
// character set: the error says what was received and gives no advice to
// convert the column.
func TestValueCollationZero(t *testing.T) {
	for _, tt := range []struct {
		name    string
		charset []uint64 // DefaultCharset of the TABLE_MAP
		opts    valueOptions
		column  string
	}{
		{"MariaDB, one column", []uint64{63, 2, 0}, mariaOpts(UUIDStandard), "column payload (the payload)"},
		{"MariaDB, the default", []uint64{0}, mariaOpts(UUIDStandard), ")"}, // any text column
		{"MySQL, one column", []uint64{255, 2, 0}, valueOptions{flavor: gtid.MySQL, zone: time.UTC}, "column payload (the payload)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tm := fullMetaTable()
			tm.DefaultCharset = tt.charset
			_, _, err := valueConvs(tm, fiveColumns, fiveNames, nil, tt.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.column+": the TABLE_MAP event gives it collation id 0")
			assert.Contains(t, err.Error(), "not a setting or a column definition to change")
			assert.NotContains(t, err.Error(), "utf8mb4")
		})
	}
}

// Without character sets and signs in the binlog (binlog_row_metadata
// NO_LOG) they come from the tracked definition, and where that has none
// the router stops rather than guess.
func TestValueConversionsFromDefinition(t *testing.T) {
	tm := fullMetaTable()
	tm.DefaultCharset = nil
	tm.ColumnType[1], tm.ColumnMeta[1] = gomysql.MYSQL_TYPE_LONGLONG, 0
	defs := []schema.ColumnDef{{Name: "event_id", DataType: "uuid"}, {Name: "aggregate_id", DataType: "bigint", Sign: schema.Unsigned},
		{Name: "payload", DataType: "varchar", Charset: "cp1250"}, {Name: "event_type", DataType: "varchar", Charset: "ucs2"},
		{Name: "aggregate_type", DataType: "varchar", Charset: "utf8mb4"}}
	convs, _, err := valueConvs(tm, fiveColumns, fiveNames, defs, mariaOpts(UUIDSwapped))
	require.NoError(t, err)
	r := OutboxRow{EventID: []byte("\x6c\xcd\x78\x0c\xba\xba\x10\x26\x95\x64\x5b\x8c\x65\x60\x24\xdb"), AggregateID: []byte("-1"),
		Payload: []byte("\x8a\xe8"), EventType: []byte("\x00A\x01\x0d"), AggregateType: []byte("o")}
	require.NoError(t, (&table{convs: convs}).convert(&r))
	assert.Equal(t, "6ccd780c-baba-1026-9564-5b8c656024db", string(r.EventID), "MariaDB's UUID type is in text order whatever the option")
	assert.Equal(t, "18446744073709551615", string(r.AggregateID), "BIGINT UNSIGNED read as unsigned")
	assert.Equal(t, "Šč", string(r.Payload), "cp1250")
	assert.Equal(t, "Ač", string(r.EventType), "ucs2")

	// A sign not known: a value that reads the same either way passes,
	// one that does not stops.
	defs[1].Sign = ""
	convs, _, err = valueConvs(tm, fiveColumns, fiveNames, defs, mariaOpts(UUIDStandard))
	require.NoError(t, err)
	r = OutboxRow{AggregateID: []byte("42")}
	require.NoError(t, (&table{convs: convs}).convert(&r))
	assert.Equal(t, "42", string(r.AggregateID))
	r = OutboxRow{AggregateID: []byte("-2")}
	assert.ErrorContains(t, (&table{convs: convs}).convert(&r), "its value is -2 if SIGNED and 18446744073709551614 if UNSIGNED; set binlog_row_metadata=MINIMAL or FULL")
	tm.ColumnType[1] = gomysql.MYSQL_TYPE_SHORT
	defs[1] = schema.ColumnDef{Name: "aggregate_id", DataType: "smallint", Sign: schema.Unsigned}
	convs, _, err = valueConvs(tm, fiveColumns, fiveNames, defs, mariaOpts(UUIDStandard))
	require.NoError(t, err)
	r = OutboxRow{AggregateID: []byte("-1")}
	require.NoError(t, (&table{convs: convs}).convert(&r))
	assert.Equal(t, "65535", string(r.AggregateID), "SMALLINT UNSIGNED")

	// A character set not known.
	defs[2].Charset = ""
	_, _, err = valueConvs(tm, fiveColumns, fiveNames, defs, mariaOpts(UUIDStandard))
	assert.ErrorContains(t, err, "column payload (the payload): its character set is not known")
	assert.ErrorContains(t, err, "binlog_row_metadata=MINIMAL or FULL")
	_, _, err = valueConvs(tm, fiveColumns, fiveNames, nil, mariaOpts(UUIDStandard))
	assert.ErrorContains(t, err, "its character set is not known: the binlog carries no character sets")

	// The binlog's and the definition's character sets disagree: the
	// definition does not describe the row.
	defs[2].Charset = "latin1"
	tm = fullMetaTable()
	_, _, err = valueConvs(tm, fiveColumns, fiveNames, defs, mariaOpts(UUIDStandard))
	assert.ErrorContains(t, err, "the row has character set utf16, the tracked definition ucs2")
}

func TestValueTypes(t *testing.T) {
	tm := &replication.TableMapEvent{ColumnCount: 6,
		ColumnType: []byte{gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_NEWDECIMAL,
			gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_JSON, gomysql.MYSQL_TYPE_DATETIME2},
		ColumnMeta:     []uint16{144, 144, 0x1404, 144, 4, 6},
		DefaultCharset: []uint64{255}, // MySQL 8's utf8mb4_0900_ai_ci
	}
	l := schema.Layout{EventID: 0, AggregateType: 1, AggregateID: 2, EventType: 3, Payload: 4, CreatedAt: 5,
		SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 6}
	names := []string{"id", "type", "agg", "ev", "payload", "created_at"}
	mysql := valueOptions{flavor: gtid.MySQL, uuid: UUIDStandard}
	_, _, err := valueConvs(tm, l, names, nil, mysql)
	assert.ErrorContains(t, err, "column created_at (the creation time) is a DATETIME, a wall-clock time without a time zone, and the server's time zone is not known")
	assert.ErrorContains(t, err, "--datetime-zone")
	mysql.zone = time.FixedZone("+05:00", 5*3600)
	convs, zone, err := valueConvs(tm, l, names, nil, mysql)
	require.NoError(t, err)
	assert.Equal(t, mysql.zone, zone)
	assert.Len(t, convs, 4, "UTF-8 checks of the three text columns and the JSON text; DECIMAL as decoded")

	for _, bad := range []struct {
		tp   byte
		want string
	}{
		{gomysql.MYSQL_TYPE_DOUBLE, "column agg (the aggregate id) is of type DOUBLE, which the router does not publish"},
		{gomysql.MYSQL_TYPE_DATE, "column agg (the aggregate id) is of type DATE"},
		{gomysql.MYSQL_TYPE_ENUM, "column agg (the aggregate id) is of type ENUM"},
	} {
		tm.ColumnType[2] = bad.tp
		_, _, err = valueConvs(tm, l, names, nil, mysql)
		assert.ErrorContains(t, err, bad.want)
	}
	tm.ColumnType[2] = gomysql.MYSQL_TYPE_NEWDECIMAL
	tm.ColumnType[5] = gomysql.MYSQL_TYPE_LONG
	_, _, err = valueConvs(tm, l, names, nil, mysql)
	assert.ErrorContains(t, err, "column created_at (the creation time) is of type integer; the record timestamp comes from a TIMESTAMP, a DATETIME or a BIGINT of epoch milliseconds")
}

// Collation ids as the servers number them, the high ones included.
func TestCharsetOf(t *testing.T) {
	for _, tt := range []struct {
		flavor gtid.Flavor
		id     uint64
		want   string
	}{
		{gtid.MySQL, 8, "latin1"}, {gtid.MariaDB, 8, "latin1"}, {gtid.MySQL, 33, "utf8mb3"}, {gtid.MySQL, 45, "utf8mb4"},
		{gtid.MySQL, 63, "binary"}, {gtid.MySQL, 54, "utf16"}, {gtid.MySQL, 35, "ucs2"}, {gtid.MySQL, 60, "utf32"},
		{gtid.MySQL, 255, "utf8mb4"}, {gtid.MySQL, 309, "utf8mb4"}, {gtid.MySQL, 323, "utf8mb4"}, {gtid.MySQL, 324, ""},
		{gtid.MySQL, 2304, ""},
		{gtid.MariaDB, 576, "utf8mb3"}, {gtid.MariaDB, 608, "utf8mb4"}, {gtid.MariaDB, 640, "ucs2"}, {gtid.MariaDB, 672, "utf16"},
		{gtid.MariaDB, 736, "utf32"}, {gtid.MariaDB, 1069, "utf8mb4"}, {gtid.MariaDB, 1032, "latin1"},
		{gtid.MariaDB, 2048, "utf8mb3"}, {gtid.MariaDB, 2304, "utf8mb4"}, {gtid.MariaDB, 2503, "utf8mb4"},
		{gtid.MariaDB, 2560, "ucs2"}, {gtid.MariaDB, 2816, "utf16"}, {gtid.MariaDB, 3072, "utf32"},
		{gtid.MariaDB, 3328, ""}, {gtid.MariaDB, 309, ""}, {gtid.MariaDB, 512, ""},
	} {
		got, ok := charsetOf(tt.flavor, tt.id)
		assert.Equal(t, tt.want, got, "%s %d", tt.flavor, tt.id)
		assert.Equal(t, tt.want != "", ok, "%s %d", tt.flavor, tt.id)
	}
}

func TestTextDecoders(t *testing.T) {
	for _, tt := range []struct {
		cs, in, want, err string
	}{
		{"utf16", "\x00A\xd8\x3d\xde\x00", "A😀", ""},
		{"utf16", "\x00A\xd8\x3d", "", "lone UTF-16 surrogate 0xd83d at byte 2"},
		{"utf16", "\xdc\x00", "", "lone UTF-16 surrogate"},
		{"utf16", "\x00", "", "not whole UTF-16 code units"},
		{"utf16le", "A\x00\x3d\xd8\x00\xde", "A😀", ""},
		{"ucs2", "\x00A\x00\xe9", "Aé", ""},
		{"ucs2", "\xd8\x3d\xde\x00", "", "is a surrogate"},
		{"utf32", "\x00\x00\x00A\x00\x01\xf6\x00", "A😀", ""},
		{"utf32", "\x00\x11\x00\x00", "", "is no character"},
		{"latin1", "Caf\xe9 \x80", "Café €", ""},
		{"cp1250", "\x8a\xe8", "Šč", ""},
		{"cp1250", "\x81", "", "byte 0x81 holds no character"},
		{"koi8r", "\xf0\xd2\xc9", "При", ""},
		{"swe7", "\x7b\x7d", "äå", ""},
		{"swe7", "\x80", "", "byte 0x80 holds no character"},
	} {
		dec, ok := decoderFor(tt.cs)
		require.True(t, ok, tt.cs)
		got, err := dec(nil, []byte(tt.in))
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%s %q", tt.cs, tt.in)
			continue
		}
		require.NoError(t, err, "%s %q", tt.cs, tt.in)
		assert.Equal(t, tt.want, string(got), "%s %q", tt.cs, tt.in)
	}
	for _, cs := range []string{"sjis", "big5", "gbk", "ujis", "euckr", "gb18030", "cp932"} {
		_, ok := decoderFor(cs)
		assert.False(t, ok, cs)
	}
}

// go-mysql's compact JSON spelled as MySQL's SELECT prints it.
func TestMySQLJSONText(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":[true,null,"x,y: z"],"c":{}}`: `{"a": 1, "b": [true, null, "x,y: z"], "c": {}}`,
		`["\u003c\u003e\u0026","\u2028\u2029"]`:   "[\"<>&\", \"\u2028\u2029\"]",
		`"a\\u003c\"\n\u001f"`:                    `"a\\u003c\"\n\u001f"`,
		`[]`:                                      `[]`,
		`12.5`:                                    `12.5`,
	} {
		assert.Equal(t, want, string(mysqlJSONText([]byte(in))), in)
	}
}

func TestParseZone(t *testing.T) {
	for _, tt := range []struct {
		in     string
		offset int // at 2024-07-01 12:00 UTC
		err    bool
	}{
		{"+05:00", 5 * 3600, false}, {"-03:30", -(3*3600 + 1800), false}, {"UTC", 0, false}, {"utc", 0, false},
		{"Europe/Berlin", 2 * 3600, false}, {"Asia/Kolkata", 5*3600 + 1800, false},
		{"+15:00", 0, true}, {"CEST", 0, true}, {"", 0, true}, {"Local", 0, true}, {"5", 0, true},
	} {
		loc, err := ParseZone(tt.in)
		if tt.err {
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		_, off := time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC).In(loc).Zone()
		assert.Equal(t, tt.offset, off, tt.in)
	}
	for _, tt := range []struct {
		tz, system string
		want       string // "" : not known
	}{
		{"+05:00", "UTC", "+05:00"}, {"SYSTEM", "UTC", "UTC"}, {"SYSTEM", "CEST", ""}, {"Europe/Berlin", "CET", "Europe/Berlin"},
		{"", "", ""},
	} {
		loc, err := (&Server{TimeZone: tt.tz, SystemTimeZone: tt.system}).DatetimeZone()
		if tt.want == "" {
			assert.Error(t, err, tt.tz)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, loc.String())
	}
}

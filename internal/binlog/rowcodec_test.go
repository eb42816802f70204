package binlog

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// capturedRows is an INSERT rows event with its undecoded row data.
type capturedRows struct {
	e    *replication.RowsEvent
	typ  replication.EventType
	data []byte
}

// captureInserts returns a rows event decoder for a parser that keeps the
// row data of every INSERT event (any table) undecoded.
func captureInserts(u *undecoded) func(*replication.RowsEvent, []byte) error {
	return func(e *replication.RowsEvent, data []byte) error {
		pos, err := e.DecodeHeader(data)
		if err != nil {
			return err
		}
		if e.Type() == replication.EnumRowsEventTypeInsert {
			u.put(e, append([]byte(nil), data[pos:]...))
		}
		return nil
	}
}

// compareWithGoMySQL checks, for every layout that maps one field to one
// column, that the rowCodec gives what go-mysql's decoder plus
// rowFromValues give; it returns how many events the codec could decode.
func compareWithGoMySQL(t *testing.T, c capturedRows) (usable int) {
	t.Helper()
	name := string(c.e.Table.Schema) + "." + string(c.e.Table.Table)
	require.NoError(t, c.e.DecodeData(0, c.data), name)
	n := int(c.e.ColumnCount)
	fields := []rowField{fieldEventID, fieldAggregateType, fieldAggregateID, fieldEventType, fieldPayload,
		fieldSchemaVersion, fieldTraceparent, fieldHeaders, fieldCreatedAt}
	for col := range n {
		for _, f := range fields {
			l := schema.Layout{EventID: -1, AggregateType: -1, AggregateID: -1, EventType: -1, Payload: -1,
				CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: n}
			*layoutColumns(&l)[f] = col
			tbl := &table{db: string(c.e.Table.Schema), tbl: string(c.e.Table.Table), name: name, layout: l}
			codec := tbl.codecFor(c.e.Table)
			if !codec.usable {
				continue
			}
			usable++
			pos := 0
			for i, values := range c.e.Rows {
				var want, got OutboxRow
				rowFromValues(tbl, values, &want)
				k, err := codec.row(c.data[pos:], c.e.ColumnBitmap1, &got)
				require.NoError(t, err, "%s row %d", name, i)
				pos += k
				rowIdentity(tbl, &got)
				where := fmt.Sprintf("%s row %d column %d (type %d meta %d) as field %d: go-mysql value %#v",
					name, i, col, c.e.Table.ColumnType[col], c.e.Table.ColumnMeta[col], f, values[col])
				assert.Equal(t, want, got, where)
				assert.True(t, want.CreatedAt.Equal(got.CreatedAt) && want.CreatedAt.Location().String() == got.CreatedAt.Location().String(), where)
			}
			assert.Equal(t, len(c.data), pos, "%s: every byte of the event decoded", name)
		}
	}
	return usable
}

// The codec agrees with go-mysql on every INSERT of the MySQL 8 fixtures.
func TestRowCodecMatchesGoMySQLOnMySQL8Files(t *testing.T) {
	dir := mysql8FixtureDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.bin"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	events, usable := 0, 0
	for _, path := range files {
		u := newUndecoded()
		p := replication.NewBinlogParser()
		p.SetFlavor(gomysql.MySQLFlavor)
		p.SetParseTime(true)
		p.SetRenderJSONAsMySQLText(true)
		p.SetVerifyChecksum(false)
		p.SetRowsEventDecodeFunc(captureInserts(u))
		var captured []capturedRows
		var collect func(ev *replication.BinlogEvent) error
		collect = func(ev *replication.BinlogEvent) error {
			switch e := ev.Event.(type) {
			case *replication.RowsEvent:
				if data, ok := u.take(e); ok {
					captured = append(captured, capturedRows{e: e, typ: ev.Header.EventType, data: data})
				}
			case *replication.TransactionPayloadEvent:
				for _, inner := range e.Events {
					if err := collect(inner); err != nil {
						return err
					}
				}
			}
			return nil
		}
		require.NoError(t, p.ParseFile(path, 0, collect), path)
		for _, c := range captured {
			events++
			usable += compareWithGoMySQL(t, c)
		}
	}
	t.Logf("%d INSERT events in %d files; %d event x layout combinations decoded by the codec", events, len(files), usable)
	require.Positive(t, usable)
}

// The codec agrees with go-mysql on a MariaDB table of many column types,
// with NULLs, empty and long values, and on a table whose rows image
// leaves columns out.
func TestRowCodecMatchesGoMySQLOnMariaDB(t *testing.T) {
	m := devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	db := devenv.CreateDatabase(t, m, "codec")
	_, err := db.Exec(`CREATE TABLE types (
		id BIGINT AUTO_INCREMENT PRIMARY KEY,
		vc VARCHAR(100), vcl VARCHAR(1000), ch CHAR(36), chl CHAR(200) CHARACTER SET utf8mb4,
		bin BINARY(16), vbin VARBINARY(300),
		tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT, js JSON, bl BLOB,
		ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
		i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
		ts TIMESTAMP NULL, ts3 TIMESTAMP(3) NULL, ts6 TIMESTAMP(6) NULL,
		dt DATETIME NULL, dt1 DATETIME(1) NULL, dt4 DATETIME(4) NULL, dt6 DATETIME(6) NULL,
		d DATE, tm TIME(3), y YEAR, dec1 DECIMAL(10,2), dec2 DECIMAL(30,12), f FLOAT, dbl DOUBLE,
		e ENUM('a','b'), s SET('x','y','z'), b BIT(10)
	)`)
	require.NoError(t, err)
	long := strings.Repeat("ü", 300)
	rows := [][]any{
		{"a", "b", "c", "d", "0123456789abcdef", "v", "t", "tx", "mt", "lt", `{"k":1}`, []byte{0, 1, 2},
			-128, 255, -32768, 65535, -8388608, 16777215, -2147483648, uint32(4294967295), int64(-9223372036854775808), uint64(18446744073709551615),
			"2026-12-02 10:11:12", "2026-12-02 10:11:12.123", "1970-01-01 00:00:01.000001",
			"2026-12-02 10:11:12", "1969-07-20 20:17:40.5", "0000-00-00 00:00:00", "9999-12-31 23:59:59.999999",
			"2026-12-02", "-838:59:59.000", 2026, "12345678.90", "-123456789012345678.123456789012", 1.5, -2.25, "b", "x,z", 5},
		{"", "", "", "", "", "", "", "", "", "", `""`, []byte{},
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			nil, nil, nil, "2000-00-00 00:00:00", nil, nil, nil,
			nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{nil, strings.Repeat("x", 1000), nil, long[:200], nil, strings.Repeat("\x00", 300), nil, strings.Repeat("y", 70000), strings.Repeat("z", 200000), nil, nil, nil,
			nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
			nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	cols := "vc, vcl, ch, chl, bin, vbin, tt, tx, mt, lt, js, bl, ti, tiu, si, siu, mi, miu, i, iu, bi, biu, " +
		"ts, ts3, ts6, dt, dt1, dt4, dt6, d, tm, y, dec1, dec2, f, dbl, e, s, b"
	_, err = db.Exec("SET SESSION sql_mode = 'ALLOW_INVALID_DATES'")
	require.NoError(t, err)
	for _, r := range rows {
		_, err := db.Exec("INSERT INTO types ("+cols+") VALUES (?"+strings.Repeat(", ?", len(r)-1)+")", r...)
		require.NoError(t, err)
	}
	// A multi-row event, and a table the codec can decode only in part.
	_, err = db.Exec(`CREATE TABLE outbox (id CHAR(36) PRIMARY KEY, aggregate_id VARCHAR(255), payload LONGTEXT, created_at TIMESTAMP(6) NULL)`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO outbox VALUES (UUID(), 'a', '{}', NOW(6)), (UUID(), NULL, NULL, NULL), (UUID(), 'c', REPEAT('p', 5000), '2001-02-03 04:05:06')`)
	require.NoError(t, err)

	u := newUndecoded()
	host, port := splitAddr(t, m.Addr())
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: 4242, Flavor: gomysql.MariaDBFlavor, Host: host, Port: port, User: "root",
		Charset: "utf8mb4", ParseTime: true, RenderJSONAsMySQLText: true,
		RowsEventDecodeFunc: captureInserts(u), Logger: slog.New(slog.DiscardHandler),
	})
	defer syncer.Close()
	start, err := gomysql.ParseMariadbGTIDSet("")
	require.NoError(t, err)
	streamer, err := syncer.StartSyncGTID(start)
	require.NoError(t, err)
	var captured []capturedRows
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(captured) < len(rows)+1 {
		ev, err := streamer.GetEvent(ctx)
		require.NoError(t, err, "reading the binlog")
		if e, ok := ev.Event.(*replication.RowsEvent); ok {
			if data, ok := u.take(e); ok && string(e.Table.Schema) == "codec" {
				captured = append(captured, capturedRows{e: e, typ: ev.Header.EventType, data: data})
			}
		}
	}
	usable := 0
	for _, c := range captured {
		usable += compareWithGoMySQL(t, c)
	}
	t.Logf("%d INSERT events; %d event x layout combinations decoded by the codec", len(captured), usable)
	require.Positive(t, usable)
}

// Truncated or corrupt row data is an error, never a panic.
func TestRowCodecTruncated(t *testing.T) {
	tm := &replication.TableMapEvent{ColumnCount: 3,
		ColumnType: []byte{gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_LONGLONG},
		ColumnMeta: []uint16{400, 4, 0}}
	l := schema.Layout{EventID: 0, AggregateType: -1, AggregateID: 2, EventType: -1, Payload: 1,
		CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 3}
	c := newRowCodec(tm, l, nil)
	require.True(t, c.usable)
	good := []byte{0, 2, 0, 'i', 'd', 3, 0, 0, 0, 'p', 'a', 'y', 7, 0, 0, 0, 0, 0, 0, 0}
	var r OutboxRow
	n, err := c.row(good, []byte{7}, &r)
	require.NoError(t, err)
	assert.Equal(t, len(good), n)
	assert.Equal(t, "id", string(r.EventID))
	assert.Equal(t, "pay", string(r.Payload))
	assert.Equal(t, "7", string(r.AggregateID))
	for i := range len(good) {
		_, err := c.row(good[:i], []byte{7}, &r)
		assert.ErrorIs(t, err, errRowTruncated, "cut at %d", i)
	}
	huge := append([]byte{0, 0, 0}, 0xff, 0xff, 0xff, 0xff)
	_, err = c.row(huge, []byte{7}, &r)
	assert.ErrorIs(t, err, errRowTruncated)
}

// FuzzRowCodec: any row data gives rows or an error, never a panic, for
// any column types.
func FuzzRowCodec(f *testing.F) {
	f.Add([]byte{gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_DATETIME2}, []byte{1, 2, 3, 4, 5, 6}, []byte{0, 1, 'a', 1, 'b', 0x99, 0x99, 0, 0, 0})
	f.Fuzz(func(t *testing.T, types, metas, data []byte) {
		if len(types) == 0 || len(types) > 64 {
			return
		}
		tm := &replication.TableMapEvent{ColumnCount: uint64(len(types)), ColumnType: types,
			ColumnMeta: make([]uint16, len(types)), SignednessBitmap: metas}
		for i := range types {
			if 2*i+1 < len(metas) {
				tm.ColumnMeta[i] = uint16(metas[2*i])<<8 | uint16(metas[2*i+1])
			}
		}
		l := schema.Layout{EventID: 0, AggregateType: -1, AggregateID: len(types) - 1, EventType: -1, Payload: len(types) / 2,
			CreatedAt: (len(types) + 1) / 3, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: len(types)}
		c := newRowCodec(tm, l, nil)
		if !c.usable {
			return
		}
		present := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		for pos := 0; pos < len(data); {
			var r OutboxRow
			n, err := c.row(data[pos:], present, &r)
			if err != nil {
				return
			}
			if n <= 0 {
				return // an all-NULL row of zero-width columns still has its null bitmap
			}
			pos += n
		}
	})
}

func splitAddr(t *testing.T, addr string) (string, uint16) {
	t.Helper()
	host, port, ok := strings.Cut(addr, ":")
	require.True(t, ok, addr)
	var p uint16
	_, err := fmt.Sscan(port, &p)
	require.NoError(t, err)
	return host, p
}

// benchRow is one outbox row of the benchmark's shape: a CHAR(36) id,
// three VARCHARs, a 500-byte LONGTEXT payload and a TIMESTAMP(6), all
// utf8mb4 (MariaDB's FULL metadata), with its TABLE_MAP and layout.
func benchRow(tb testing.TB) (*replication.TableMapEvent, schema.Layout, []byte) {
	tm := &replication.TableMapEvent{ColumnCount: 6,
		ColumnType: []byte{gomysql.MYSQL_TYPE_STRING, gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VARCHAR,
			gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_TIMESTAMP2},
		ColumnMeta:     []uint16{0xfe00 | 144, 1020, 1020, 1020, 4, 6},
		DefaultCharset: []uint64{224}}
	l := schema.Layout{EventID: 0, AggregateType: 1, AggregateID: 2, EventType: 3, Payload: 4,
		CreatedAt: 5, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 6}
	row := []byte{0}
	row = append(append(row, 36), "0b7e8a52-2a5b-4c2e-9d55-7f6c1f1e0a01"...)
	for _, s := range []string{"order", "order-1234", "OrderCreated"} {
		row = append(append(row, byte(len(s)), 0), s...)
	}
	payload := `{"data":"` + strings.Repeat("x", 480) + `"}`
	row = append(row, byte(len(payload)), byte(len(payload)>>8), 0, 0)
	row = append(row, payload...)
	row = append(row, 0x67, 0x4d, 0x9a, 0x00, 0x01, 0xe2, 0x40)
	return tm, l, row
}

// BenchmarkRowCodec decodes one outbox row of benchRow's shape.
func BenchmarkRowCodec(b *testing.B) {
	tm, l, row := benchRow(b)
	c := newRowCodec(tm, l, nil)
	require.True(b, c.usable)
	present := []byte{0x3f}
	b.ReportAllocs()
	b.SetBytes(int64(len(row)))
	for b.Loop() {
		var r OutboxRow
		if _, err := c.row(row, present, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRowDecode is a row's whole way from the row image to the
// OutboxRow handed over: the codec, then the conversions (here the UTF-8
// checks of the five utf8mb4 columns).
func BenchmarkRowDecode(b *testing.B) {
	tm, l, row := benchRow(b)
	tbl := decodeTable(b, tm, l)
	present := []byte{0x3f}
	b.ReportAllocs()
	b.SetBytes(int64(len(row)))
	for b.Loop() {
		var r OutboxRow
		if _, err := tbl.codec.row(row, present, &r); err != nil {
			b.Fatal(err)
		}
		if err := tbl.convert(&r); err != nil {
			b.Fatal(err)
		}
	}
}

// decodeTable is the table a reader resolves for tm: its conversions and
// codec.
func decodeTable(tb testing.TB, tm *replication.TableMapEvent, l schema.Layout) *table {
	convs, zone, err := valueConvs(tm, l, []string{"event_id", "aggregate_type", "aggregate_id", "event_type", "payload", "created_at"},
		nil, valueOptions{flavor: gtid.MariaDB, uuid: UUIDStandard})
	require.NoError(tb, err)
	tbl := &table{layout: l, convs: convs, zone: zone}
	require.True(tb, tbl.codecFor(tm).usable)
	return tbl
}

// A utf8mb4 row costs no allocation from row image to OutboxRow.
func TestRowDecodeDoesNotAllocate(t *testing.T) {
	tm, l, row := benchRow(t)
	tbl := decodeTable(t, tm, l)
	present := []byte{0x3f}
	var r OutboxRow
	allocs := testing.AllocsPerRun(1000, func() {
		r = OutboxRow{}
		if _, err := tbl.codec.row(row, present, &r); err != nil {
			t.Fatal(err)
		}
		if err := tbl.convert(&r); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, "0b7e8a52-2a5b-4c2e-9d55-7f6c1f1e0a01", string(r.EventID))
	assert.Len(t, tbl.convs, 5, "a UTF-8 check for each of the five text columns")
}

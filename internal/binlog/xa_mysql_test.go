package binlog

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// mysqlBinlog builds a MySQL 8 binlog file event by event, in the layout
// MySQL writes (v4 headers, CRC32 checksums), so that XA transactions can
// be decoded by go-mysql's parser without a MySQL server.
type mysqlBinlog struct {
	buf []byte
	sid [16]byte
}

const xaTestTableID = 77

func newMySQLBinlog() *mysqlBinlog {
	b := &mysqlBinlog{buf: []byte{0xfe, 'b', 'i', 'n'}}
	copy(b.sid[:], []byte("0123456789abcdef"))
	// FORMAT_DESCRIPTION: version 4, server version, timestamp, header
	// length 19, the post-header length of every event type, checksum
	// algorithm CRC32.
	body := binary.LittleEndian.AppendUint16(nil, 4)
	sv := make([]byte, 50)
	copy(sv, "8.0.36")
	body = append(body, sv...)
	body = binary.LittleEndian.AppendUint32(body, 0)
	body = append(body, 19)
	lengths := make([]byte, 41)
	lengths[replication.QUERY_EVENT-1] = 13
	lengths[replication.TABLE_MAP_EVENT-1] = 8
	lengths[replication.WRITE_ROWS_EVENTv2-1] = 10
	lengths[replication.FORMAT_DESCRIPTION_EVENT-1] = 98
	lengths[replication.GTID_EVENT-1] = 42
	body = append(body, lengths...)
	body = append(body, 1) // CRC32
	b.event(replication.FORMAT_DESCRIPTION_EVENT, body)
	return b
}

// event appends one event and returns its start position.
func (b *mysqlBinlog) event(typ replication.EventType, body []byte) uint32 {
	start := uint32(len(b.buf))
	size := uint32(19 + len(body) + 4)
	h := binary.LittleEndian.AppendUint32(nil, 1700000000)
	h = append(h, byte(typ))
	h = binary.LittleEndian.AppendUint32(h, 1)
	h = binary.LittleEndian.AppendUint32(h, size)
	h = binary.LittleEndian.AppendUint32(h, start+size)
	h = binary.LittleEndian.AppendUint16(h, 0)
	ev := append(h, body...)
	ev = binary.LittleEndian.AppendUint32(ev, crc32.ChecksumIEEE(ev))
	b.buf = append(b.buf, ev...)
	return start
}

func (b *mysqlBinlog) gtid(gno int64) uint32 {
	body := []byte{1}
	body = append(body, b.sid[:]...)
	body = binary.LittleEndian.AppendUint64(body, uint64(gno))
	body = append(body, 2) // logical timestamps
	body = binary.LittleEndian.AppendUint64(body, 0)
	body = binary.LittleEndian.AppendUint64(body, uint64(gno))
	return b.event(replication.GTID_EVENT, body)
}

func (b *mysqlBinlog) query(q string) {
	body := binary.LittleEndian.AppendUint32(nil, 1) // thread id
	body = binary.LittleEndian.AppendUint32(body, 0) // exec time
	body = append(body, 4)                           // db length
	body = binary.LittleEndian.AppendUint16(body, 0) // error code
	body = binary.LittleEndian.AppendUint16(body, 0) // status vars length
	body = append(body, "shop"...)
	body = append(body, 0)
	body = append(body, q...)
	b.event(replication.QUERY_EVENT, body)
}

// outboxInsert writes a TABLE_MAP of shop.outbox (five utf8mb4 VARCHAR
// columns) and a WRITE_ROWS event with one row per event id.
func (b *mysqlBinlog) outboxInsert(ids ...string) {
	const cols = 5
	tableID := binary.LittleEndian.AppendUint32(nil, xaTestTableID)
	tableID = append(tableID, 0, 0)
	body := append(append([]byte(nil), tableID...), 1, 0) // flags
	body = append(body, 4)
	body = append(body, "shop"...)
	body = append(body, 0, 6)
	body = append(body, "outbox"...)
	body = append(body, 0, cols)
	for range cols {
		body = append(body, byte(gomysqlTypeVarchar))
	}
	body = append(body, 2*cols) // metadata: max length 250 each
	for range cols {
		body = binary.LittleEndian.AppendUint16(body, 250)
	}
	body = append(body, 0) // null bitmap: no column nullable
	// Optional metadata, as binlog_row_metadata=MINIMAL logs it: the
	// default collation, utf8mb4_0900_ai_ci (255, a packed integer).
	body = append(body, 2, 3, 0xfc, 255, 0)
	b.event(replication.TABLE_MAP_EVENT, body)

	rows := append(append([]byte(nil), tableID...), 1, 0) // flags: end of statement
	rows = binary.LittleEndian.AppendUint16(rows, 2)      // extra data length (itself)
	rows = append(rows, cols, 0x1f)                       // column count, columns present
	for _, id := range ids {
		rows = append(rows, 0) // no NULLs
		for _, v := range []string{id, "order", "agg-" + id, "Placed", `{"id":"` + id + `"}`} {
			rows = append(rows, byte(len(v)))
			rows = append(rows, v...)
		}
	}
	b.event(replication.WRITE_ROWS_EVENTv2, rows)
}

// gomysqlTypeVarchar is MYSQL_TYPE_VARCHAR.
const gomysqlTypeVarchar = 15

func (b *mysqlBinlog) xaPrepare(gtrid string, onePhase bool) {
	body := []byte{0}
	if onePhase {
		body[0] = 1
	}
	body = binary.LittleEndian.AppendUint32(body, 1)
	body = binary.LittleEndian.AppendUint32(body, uint32(len(gtrid)))
	body = binary.LittleEndian.AppendUint32(body, 0)
	body = append(body, gtrid...)
	b.event(replication.XA_PREPARE_LOG_EVENT, body)
}

// TestReadFileMySQLXA decodes MySQL 8's XA event groups through go-mysql's
// parser: a prepare group (XA START ... XA END, XA_PREPARE_LOG_EVENT)
// publishes nothing; its XA COMMIT group publishes its rows, read again
// from the prepare group, as rows of the commit transaction; XA ROLLBACK
// publishes nothing; an XA_PREPARE_LOG_EVENT with one_phase is a commit.
func TestReadFileMySQLXA(t *testing.T) {
	b := newMySQLBinlog()
	hexID := func(s string) string { return "X'" + hexString(s) + "',X'',1" }

	tm1Pos := b.gtid(1) // prepared, committed later
	b.query("XA START " + hexID("tm-1"))
	b.outboxInsert("e1", "e2")
	b.query("XA END " + hexID("tm-1"))
	b.xaPrepare("tm-1", false)

	b.gtid(2) // ordinary, between
	b.query("BEGIN")
	b.outboxInsert("e3")
	b.event(replication.XID_EVENT, binary.LittleEndian.AppendUint64(nil, 9))

	b.gtid(3) // prepared, rolled back later
	b.query("XA START " + hexID("tm-2"))
	b.outboxInsert("e4")
	b.query("XA END " + hexID("tm-2"))
	b.xaPrepare("tm-2", false)

	b.gtid(4)
	b.query("XA COMMIT " + hexID("tm-1"))
	b.gtid(5)
	b.query("XA ROLLBACK " + hexID("tm-2"))

	b.gtid(6) // one phase
	b.query("XA START " + hexID("tm-3"))
	b.outboxInsert("e5")
	b.query("XA END " + hexID("tm-3"))
	b.xaPrepare("tm-3", true)

	b.gtid(7) // commit of a transaction prepared before the file
	b.query("XA COMMIT " + hexID("tm-unknown"))

	path := filepath.Join(t.TempDir(), "binlog.000001")
	require.NoError(t, os.WriteFile(path, b.buf, 0o600))
	src := newFileColumnSource(map[string][]string{
		"shop.outbox": {"event_id", "aggregate_type", "aggregate_id", "event_type", "payload"},
	})
	batches, err := readFileBatches(t, path, FileConfig{
		Flavor: gtid.MySQL, Tables: []schema.TableName{{Database: "shop", Table: "outbox"}},
		Columns: schema.DefaultColumns(), Source: src.source,
	})
	var xe *XAError
	require.ErrorAs(t, err, &xe, "the commit of an XA transaction prepared before the file")
	assert.ErrorIs(t, err, ErrXAUnknown)
	assert.Equal(t, "'tm-unknown'", xe.XID)
	assert.Contains(t, err.Error(), "XA transaction 'tm-unknown' committed in transaction 30313233-3435-3637-3839-616263646566:7")

	sid := "30313233-3435-3637-3839-616263646566:"
	type txn struct {
		gtid     string
		ids      []string
		prepared []string // XIDs prepared after it; nil: no change
	}
	var got []txn
	for _, b := range batches {
		require.Len(t, b.Done, 1)
		tx := txn{gtid: b.Done[0].GTID}
		for _, r := range b.Rows {
			tx.ids = append(tx.ids, string(r.EventID))
			assert.Same(t, b.Done[0], r.Txn, "row of %s", r.EventID)
		}
		if x := b.Done[0].XA; x != nil {
			tx.prepared = []string{}
			for _, p := range x.List {
				tx.prepared = append(tx.prepared, p.XID)
			}
		}
		got = append(got, tx)
	}
	tm1, tm2 := hexID("tm-1"), hexID("tm-2")
	assert.Equal(t, []txn{
		{gtid: sid + "1", prepared: []string{tm1}},
		{gtid: sid + "2", ids: []string{"e3"}},
		{gtid: sid + "3", prepared: []string{tm1, tm2}},
		{gtid: sid + "4", ids: []string{"e1", "e2"}, prepared: []string{tm2}},
		{gtid: sid + "5", prepared: []string{}},
		{gtid: sid + "6", ids: []string{"e5"}},
	}, got)
	assert.Equal(t, tm1Pos, batches[0].Done[0].XA.List[0].Pos, "the prepare group starts at its GTID event")
}

// TestReadFileXAPreparedElsewhere: a commit whose prepare group is in an
// earlier file of the same directory is read from there; a prepare group
// whose file is gone is a purged binlog naming the XID.
func TestReadFileXAPreparedElsewhere(t *testing.T) {
	dir := t.TempDir()
	first := newMySQLBinlog()
	pos := first.gtid(1)
	first.query("XA START X'6f2d3432',X'',1")
	first.outboxInsert("p1")
	first.query("XA END X'6f2d3432',X'',1")
	first.xaPrepare("o-42", false)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "binlog.000001"), first.buf, 0o600))
	second := newMySQLBinlog()
	second.gtid(2)
	second.query("XA COMMIT X'6f2d3432',X'',1")
	path := filepath.Join(dir, "binlog.000002")
	require.NoError(t, os.WriteFile(path, second.buf, 0o600))

	prepared := []PreparedXA{{XID: "X'6f2d3432',X'',1", GTID: "30313233-3435-3637-3839-616263646566:1", File: "binlog.000001", Pos: pos, Outbox: true}}
	cfg := FileConfig{
		Flavor: gtid.MySQL, Tables: []schema.TableName{{Database: "shop", Table: "outbox"}},
		Columns: schema.DefaultColumns(), Prepared: prepared,
		Source: newFileColumnSource(map[string][]string{
			"shop.outbox": {"event_id", "aggregate_type", "aggregate_id", "event_type", "payload"},
		}).source,
	}
	batches, err := readFileBatches(t, path, cfg)
	require.NoError(t, err)
	require.Len(t, batches, 1)
	require.Len(t, batches[0].Rows, 1)
	assert.Equal(t, "p1", string(batches[0].Rows[0].EventID))
	assert.Empty(t, batches[0].Done[0].XA.List)

	require.NoError(t, os.Remove(filepath.Join(dir, "binlog.000001")))
	_, err = readFileBatches(t, path, cfg)
	var xe *XAError
	require.ErrorAs(t, err, &xe)
	assert.True(t, errors.Is(err, ErrBinlogPurged), "a purged prepare group is a purged binlog: %v", err)
	assert.Equal(t, "'o-42'", xe.XID)
	assert.Contains(t, err.Error(), "XA transaction 'o-42' committed in transaction")
	assert.Contains(t, err.Error(), "binlog.000001")
}

func hexString(s string) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(s))
	for i := range len(s) {
		out = append(out, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(out)
}

// XIDs as the servers log them and as applications write them.
func TestParseXIDText(t *testing.T) {
	for _, tt := range []struct {
		in, key, human string
	}{
		{"X'7831',X'',1", "X'7831',X'',1", "'x1'"},
		{"X'7832',X'6232',7", "X'7832',X'6232',7", "'x2','b2',7"},
		{"'order-42'", "X'6f726465722d3432',X'',1", "'order-42'"},
		{"'a''b' , 'c', 3", "X'612762',X'63',3", "X'612762','c',3"},
		{"0x41ff", "X'41ff',X'',1", "X'41ff'"},
		{"X'00FF10',X'',1", "X'00ff10',X'',1", "X'00ff10'"},
	} {
		x, err := parseXIDText([]byte(tt.in))
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.key, x.key(), tt.in)
		assert.Equal(t, tt.human, x.String(), tt.in)
	}
	for _, bad := range []string{"", "x1", "'open", "X'zz',X'',1", "'a','b',-1", "'a' junk"} {
		_, err := parseXIDText([]byte(bad))
		assert.Error(t, err, bad)
	}
}

package checkpoint

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/schema"
)

func TestRecordDecodeRoundTrip(t *testing.T) {
	c := &Checkpoint{Name: "r1", GTIDSet: "0-1-42,1-2-7", Flavor: "mariadb", ServerID: 1,
		BinlogFile: "mysql-bin.000003", BinlogPos: 1234, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		XAPrepared: []binlog.PreparedXA{{XID: "X'7831',X'',1", GTID: "0-1-40", File: "mysql-bin.000002", Pos: 617, Outbox: true}}}
	rec, err := c.Record("cp")
	require.NoError(t, err)
	assert.Equal(t, "cp", rec.Topic)
	assert.Equal(t, []byte("r1"), rec.Key)
	got, err := Decode(rec.Value)
	require.NoError(t, err)
	assert.Equal(t, c, got)
	assert.Contains(t, string(rec.Value), `"xa_prepared":[{"xid":"X'7831',X'',1","gtid":"0-1-40","binlog_file":"mysql-bin.000002","binlog_pos":617,"outbox":true}]`)

	_, err = Decode([]byte(`{"gtid_set":"0-1-1"}`))
	assert.ErrorContains(t, err, "no flavor")
	_, err = Decode([]byte(`not json`))
	assert.ErrorContains(t, err, "decoding checkpoint")
}

// Layouts round-trip with their character sets and signs, and a
// checkpoint of an earlier version, whose layouts are arrays of columns
// with names and types only, still loads: with character sets and signs
// not known (empty), never guessed.
func TestLayoutsOldAndNew(t *testing.T) {
	c := &Checkpoint{Name: "r1", GTIDSet: "0-1-42", Flavor: "mariadb", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Layouts: map[string]schema.TableDef{"shop.outbox": {Charset: "latin1", Columns: []schema.ColumnDef{
			{Name: "id", DataType: "bigint", Sign: schema.Unsigned}, {Name: "event_id", DataType: "binary", Charset: "binary"},
			{Name: "payload", DataType: "longtext", Charset: "cp1250"}}}}}
	rec, err := c.Record("cp")
	require.NoError(t, err)
	assert.Contains(t, string(rec.Value), `"layouts":{"shop.outbox":{"columns":[{"name":"id","type":"bigint","sign":"unsigned"},{"name":"event_id","type":"binary","charset":"binary"},{"name":"payload","type":"longtext","charset":"cp1250"}],"charset":"latin1"}}`)
	got, err := Decode(rec.Value)
	require.NoError(t, err)
	assert.Equal(t, c, got)

	old := `{"name":"r1","gtid_set":"0-1-42","flavor":"mariadb","server_id":1,"time":"2026-01-02T03:04:05Z",` +
		`"layouts":{"shop.outbox":[{"name":"id","type":"bigint"},{"name":"payload","type":"longtext"}]}}`
	got, err = Decode([]byte(old))
	require.NoError(t, err)
	assert.Equal(t, map[string]schema.TableDef{"shop.outbox": {Columns: []schema.ColumnDef{
		{Name: "id", DataType: "bigint"}, {Name: "payload", DataType: "longtext"}}}}, got.Layouts)
}

package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

func TestParseDebeziumOffset(t *testing.T) {
	for _, tc := range []struct {
		name, offset string
		want         DebeziumOffset
		err          string
	}{
		{"mysql", `{"file":"mysql-bin.000003","pos":154,"gtids":"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5"}`,
			DebeziumOffset{GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", File: "mysql-bin.000003", Pos: 154}, ""},
		{"mariadb, more fields", ` {"ts_sec":1700000000,"file":"mariadb-bin.000001","pos":4,"gtids":"0-1-42,1-1-7","row":1,"event":2,"server_id":1} `,
			DebeziumOffset{GTIDs: "0-1-42,1-1-7", File: "mariadb-bin.000001", Pos: 4, Event: 2, Row: 1}, ""},
		{"gtids over lines", `{"gtids":"0-1-42,\n1-1-7","file":"f","pos":4}`, DebeziumOffset{GTIDs: "0-1-42,1-1-7", File: "f", Pos: 4}, ""},
		{"key and value array", `[["inventory",{"server":"dbserver1"}],{"file":"f","pos":4,"gtids":"0-1-3"}]`,
			DebeziumOffset{GTIDs: "0-1-3", File: "f", Pos: 4}, ""},
		{"kcat key and value", `["outbox",{"server":"shop"}] {"file":"f","pos":4,"gtids":"0-1-3","event":4,"row":1}` + "\n",
			DebeziumOffset{GTIDs: "0-1-3", File: "f", Pos: 4, Event: 4, Row: 1}, ""},
		{"REST body", `{"offsets":[{"partition":{"server":"shop"},"offset":{"file":"f","pos":4,"gtids":"0-1-3"}}]}`,
			DebeziumOffset{GTIDs: "0-1-3", File: "f", Pos: 4}, ""},
		{"REST element", `{"partition":{"server":"shop"},"offset":{"file":"f","pos":4,"gtids":"0-1-3","event":2,"row":3}}`,
			DebeziumOffset{GTIDs: "0-1-3", File: "f", Pos: 4, Event: 2, Row: 3}, ""},
		{"REST body, two offsets", `{"offsets":[{"offset":{"gtids":"0-1-3"}},{"offset":{"gtids":"0-1-4"}}]}`, DebeziumOffset{}, "has 2 offsets"},
		{"no gtids", `{"file":"mysql-bin.000003","pos":154}`, DebeziumOffset{}, `no gtids (it has file "mysql-bin.000003", pos 154): binlog-router resumes by GTID only`},
		{"empty gtids", `{"gtids":"  "}`, DebeziumOffset{}, "no gtids"},
		{"not JSON", `mysql-bin.000003:154`, DebeziumOffset{}, "parsing Debezium offset"},
		{"empty", `  `, DebeziumOffset{}, "it is empty"},
		{"three values", `1 2 3`, DebeziumOffset{}, "3 JSON values"},
		{"wrong array", `[1,2,3]`, DebeziumOffset{}, "must be [key, value]"},
		{"negative", `{"gtids":"0-1-3","event":-1}`, DebeziumOffset{}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ParseDebeziumOffset(tc.offset)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(tc.err, "no gtids") && !errors.Is(err, ErrNoGTIDs) {
					t.Fatalf("error %v does not wrap ErrNoGTIDs", err)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, o)
		})
	}
}

// fakeTxn is a TxnReader that replays one transaction.
type fakeTxn struct {
	gtid   string
	events []binlog.TxnEvent
	from   string // the set FirstTxn was asked for
}

func (f *fakeTxn) FirstTxn(_ context.Context, from *gtid.Set, fn func(binlog.TxnEvent) error) (string, error) {
	f.from = from.String()
	for _, e := range f.events {
		if err := fn(e); err != nil {
			return f.gtid, err
		}
	}
	return f.gtid, nil
}

// mariaTxn is a MariaDB transaction at mysql-bin.000001:1000: a business
// row, two single-row outbox INSERTs, a three-row outbox INSERT, an outbox
// UPDATE and a DELETE, then XID. Debezium's event indexes (1 = GTID):
//
//	1 GTID, 2 TABLE_MAP orders, 3 WRITE orders, 4 TABLE_MAP outbox,
//	5 WRITE outbox (1 row), 6 TABLE_MAP, 7 WRITE (1 row), 8 TABLE_MAP,
//	9 WRITE (3 rows), 10 TABLE_MAP, 11 UPDATE, 12 TABLE_MAP, 13 DELETE,
//	14 XID
func mariaTxn() *fakeTxn {
	ev := func(k binlog.EventKind, pos uint32) binlog.TxnEvent {
		return binlog.TxnEvent{Kind: k, File: "mysql-bin.000001", Pos: pos}
	}
	rows := func(pos uint32, outbox, insert bool, n int) binlog.TxnEvent {
		e := ev(binlog.EventRows, pos)
		e.Outbox, e.Insert, e.Rows = outbox, insert, n
		return e
	}
	return &fakeTxn{gtid: "0-1-8", events: []binlog.TxnEvent{
		ev(binlog.EventGTID, 1000),
		ev(binlog.EventTableMap, 1040), rows(1100, false, true, 1),
		ev(binlog.EventTableMap, 1200), rows(1260, true, true, 1),
		ev(binlog.EventTableMap, 1400), rows(1460, true, true, 1),
		ev(binlog.EventTableMap, 1600), rows(1660, true, true, 3),
		ev(binlog.EventTableMap, 1900), rows(1960, true, false, 1),
		ev(binlog.EventTableMap, 2100), rows(2160, true, false, 1),
		ev(binlog.EventCommit, 2300),
	}}
}

func TestDebeziumPosition(t *testing.T) {
	ctx := context.Background()
	at := func(event, row int64) DebeziumOffset {
		return DebeziumOffset{GTIDs: "0-1-7", File: "mysql-bin.000001", Pos: 1000, Event: event, Row: row}
	}
	for _, tc := range []struct {
		name    string
		offset  DebeziumOffset
		set     string
		txnRows int
		err     string
	}{
		{"at a boundary: no read", DebeziumOffset{GTIDs: "0-1-7", File: "mysql-bin.000001", Pos: 2400}, "0-1-7", 0, ""},
		{"after the business row only", at(3, 1), "0-1-7", 0, ""},
		{"after the first outbox row", at(4, 1), "0-1-7", 1, ""},
		{"after the second", at(6, 1), "0-1-7", 2, ""},
		{"one row into the three-row event", at(8, 1), "0-1-7", 3, ""},
		{"two rows into it", at(8, 2), "0-1-7", 4, ""},
		{"all its rows: the whole transaction", at(8, 3), "0-1-8", 0, ""},
		{"at the UPDATE: all inserts done", at(10, 1), "0-1-8", 0, ""},
		{"at the DELETE", at(12, 1), "0-1-8", 0, ""},
		{"other position", DebeziumOffset{GTIDs: "0-1-7", File: "mysql-bin.000001", Pos: 999, Event: 4, Row: 1}, "", 0,
			"lies inside the transaction at mysql-bin.000001:999, but the first transaction after its gtids \"0-1-7\" is 0-1-8 at mysql-bin.000001:1000"},
		{"other file", DebeziumOffset{GTIDs: "0-1-7", File: "mysql-bin.000002", Pos: 1000, Event: 4, Row: 1}, "", 0, "does not match"},
		{"beyond the transaction", at(14, 0), "", 0, "counts 14 events into transaction 0-1-8, which has 14"},
		{"gtids of the other flavour", DebeziumOffset{GTIDs: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", Event: 1}, "", 0, "gtids for a mariadb server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mariaTxn()
			p, err := DebeziumPosition(ctx, r, gtid.MariaDB, tc.offset)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.set, p.Set.String())
			assert.Equal(t, tc.txnRows, p.TxnRows)
			if tc.txnRows > 0 {
				assert.Equal(t, "0-1-8", p.TxnGTID)
			} else {
				assert.Empty(t, p.TxnGTID)
			}
			if tc.offset.InTransaction() {
				assert.Equal(t, "0-1-7", r.from, "the transaction is read from the offset's gtids")
			} else {
				assert.Empty(t, r.from, "a boundary needs no read")
			}
		})
	}
}

// TestDebeziumPositionMySQL: MySQL's transaction begins with its BEGIN
// query; the GTID event before it is not counted.
func TestDebeziumPositionMySQL(t *testing.T) {
	sid := "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	r := &fakeTxn{gtid: sid + ":6", events: []binlog.TxnEvent{
		{Kind: binlog.EventGTID, File: "binlog.000002", Pos: 500},
		{Kind: binlog.EventBegin, File: "binlog.000002", Pos: 579},
		{Kind: binlog.EventTableMap, File: "binlog.000002", Pos: 650},
		{Kind: binlog.EventRows, File: "binlog.000002", Pos: 700, Outbox: true, Insert: true, Rows: 2},
		{Kind: binlog.EventTableMap, File: "binlog.000002", Pos: 800},
		{Kind: binlog.EventRows, File: "binlog.000002", Pos: 850, Outbox: true, Insert: true, Rows: 1},
		{Kind: binlog.EventCommit, File: "binlog.000002", Pos: 950},
	}}
	p, err := DebeziumPosition(context.Background(), r, gtid.MySQL,
		DebeziumOffset{GTIDs: sid + ":1-5", File: "binlog.000002", Pos: 579, Event: 2, Row: 1})
	require.NoError(t, err)
	assert.Equal(t, sid+":1-5", p.Set.String())
	assert.Equal(t, sid+":6", p.TxnGTID)
	assert.Equal(t, 1, p.TxnRows)

	p, err = DebeziumPosition(context.Background(), r, gtid.MySQL,
		DebeziumOffset{GTIDs: sid + ":1-5", File: "binlog.000002", Pos: 579, Event: 4, Row: 1})
	require.NoError(t, err)
	assert.Equal(t, sid+":1-6", p.Set.String(), "every outbox row done: after the transaction")
}

// TestDebeziumOffsetFor turns checkpoints back into Debezium offsets, and
// DebeziumPosition turns those into the same positions.
func TestDebeziumOffsetFor(t *testing.T) {
	ctx := context.Background()
	cp := &Checkpoint{Name: "orders", GTIDSet: "0-1-7", Flavor: "mariadb", BinlogFile: "mysql-bin.000001", BinlogPos: 999}
	o, err := DebeziumOffsetFor(ctx, mariaTxn(), cp)
	require.NoError(t, err)
	assert.Equal(t, DebeziumOffset{GTIDs: "0-1-7", File: "mysql-bin.000001", Pos: 999}, o, "a boundary: the checkpoint's own position")

	for rows, want := range map[int]DebeziumOffset{
		1: {Event: 4, Row: 1},
		2: {Event: 6, Row: 1},
		3: {Event: 8, Row: 1},
		4: {Event: 8, Row: 2},
	} {
		cp := &Checkpoint{Name: "orders", GTIDSet: "0-1-7", Flavor: "mariadb", TxnGTID: "0-1-8", TxnRows: rows}
		o, err := DebeziumOffsetFor(ctx, mariaTxn(), cp)
		require.NoError(t, err, "%d rows", rows)
		want.GTIDs, want.File, want.Pos = "0-1-7", "mysql-bin.000001", 1000
		assert.Equal(t, want, o, "%d rows", rows)
		p, err := DebeziumPosition(ctx, mariaTxn(), gtid.MariaDB, o)
		require.NoError(t, err)
		assert.Equal(t, Position{Set: p.Set, TxnGTID: "0-1-8", TxnRows: rows}, p, "round trip of %d rows", rows)
		assert.Equal(t, "0-1-7", p.Set.String())
	}

	_, err = DebeziumOffsetFor(ctx, mariaTxn(), &Checkpoint{Name: "orders", GTIDSet: "0-1-7", Flavor: "mariadb", TxnGTID: "0-1-9", TxnRows: 1})
	assert.ErrorContains(t, err, "stands inside transaction 0-1-9, but the first transaction after \"0-1-7\" is 0-1-8")
	_, err = DebeziumOffsetFor(ctx, mariaTxn(), &Checkpoint{Name: "orders", GTIDSet: "0-1-7", Flavor: "mariadb", TxnGTID: "0-1-8", TxnRows: 6})
	assert.ErrorContains(t, err, "counts 6 outbox rows of transaction 0-1-8, which has only 5")
}

// FuzzParseDebeziumOffset: any text gives an offset with gtids and no
// negative counts, or an error; never a panic.
func FuzzParseDebeziumOffset(f *testing.F) {
	for _, s := range []string{
		`{"file":"mysql-bin.000003","pos":154,"gtids":"0-1-42","event":2,"row":1}`,
		`["outbox",{"server":"shop"}] {"file":"f","pos":4,"gtids":"0-1-3"}`,
		`{"offsets":[{"partition":{"server":"shop"},"offset":{"gtids":"0-1-3"}}]}`,
		`[["k"],{"gtids":"x"}]`, `{"offset":null}`, `{}`, `"x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseDebeziumOffset(s)
		if err != nil {
			return
		}
		if o.GTIDs == "" || o.Event < 0 || o.Row < 0 {
			t.Fatalf("%q gave %+v without an error", s, o)
		}
	})
}

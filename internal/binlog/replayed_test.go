package binlog

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

func TestCovered(t *testing.T) {
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	my, err := gtid.Parse(gtid.MySQL, uuid+":1-10:12:blue:1-3")
	require.NoError(t, err)
	ma, err := gtid.Parse(gtid.MariaDB, "0-1-10,2-5-7")
	require.NoError(t, err)
	mysqlID := func(g string) gtidID {
		sid, tag, gno, err := gtid.ParseMySQLGTID(g)
		require.NoError(t, err)
		return gtidID{flavor: gtid.MySQL, sid: sid, tag: tag, gno: gno}
	}
	mariaID := func(g string) gtidID {
		d, s, n, err := gtid.ParseMariaDBGTID(g)
		require.NoError(t, err)
		return gtidID{flavor: gtid.MariaDB, domain: d, server: s, seq: n}
	}
	for _, tt := range []struct {
		name string
		have *gtid.Set
		id   gtidID
		want bool
	}{
		{"MySQL, in an interval", my, mysqlID(uuid + ":5"), true},
		{"MySQL, the interval's end", my, mysqlID(uuid + ":10"), true},
		{"MySQL, in the gap", my, mysqlID(uuid + ":11"), false},
		{"MySQL, a single GTID", my, mysqlID(uuid + ":12"), true},
		{"MySQL, after the set", my, mysqlID(uuid + ":13"), false},
		{"MySQL, another uuid", my, mysqlID("4e11fa47-71ca-11e1-9e33-c80aa9429562:1"), false},
		{"MySQL, a tag in the set", my, mysqlID(uuid + ":blue:2"), true},
		{"MySQL, another tag", my, mysqlID(uuid + ":red:2"), false},
		{"MySQL, anonymous", my, gtidID{}, false},
		{"MariaDB, before the position", ma, mariaID("0-1-9"), true},
		{"MariaDB, the position", ma, mariaID("0-1-10"), true},
		{"MariaDB, after the position", ma, mariaID("0-1-11"), false},
		{"MariaDB, another server id", ma, mariaID("0-2-10"), true},
		{"MariaDB, a domain not in the set", ma, mariaID("1-1-1"), false},
		{"MariaDB, the second domain", ma, mariaID("2-5-7"), true},
		{"MariaDB, after the second domain", ma, mariaID("2-5-8"), false},
		{"a MariaDB GTID against a MySQL set", my, mariaID("0-1-1"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, covered(tt.have, tt.id))
		})
	}
}

// replaySink records what the stream hands over, and, like the reader's
// trackingSink, adds each transaction to have.
type replaySink struct {
	have   *gtid.Set
	handed []string // GTIDs of the transactions handed over
}

func (r *replaySink) addRows(_ context.Context, rows []OutboxRow, _ []int, _ Position) (int, error) {
	return len(rows), nil
}
func (r *replaySink) done(_ context.Context, t *Txn, _ Position) error {
	r.handed = append(r.handed, t.GTID)
	t.AddTo(r.have)
	return nil
}
func (r *replaySink) heartbeat(Position) {}

type replayObserver struct {
	nopObserver
	replayed []string
	ddl      []string
}

func (o *replayObserver) Replayed(g string)   { o.replayed = append(o.replayed, g) }
func (o *replayObserver) DDL(_, query string) { o.ddl = append(o.ddl, query) }

// replayFixture is a stream over a server that sends transactions the
// reader already has: the sink, the observer and the log of its guard.
type replayFixture struct {
	s    *stream
	sink *replaySink
	obs  *replayObserver
	log  *bytes.Buffer
}

func newReplayFixture(t *testing.T, flavor gtid.Flavor, have string) *replayFixture {
	t.Helper()
	set, err := gtid.Parse(flavor, have)
	require.NoError(t, err)
	f := &replayFixture{sink: &replaySink{have: set}, obs: &replayObserver{}, log: &bytes.Buffer{}}
	outbox := newOutboxSet([]schema.TableName{{Database: "shop", Table: "outbox"}})
	f.s = &stream{flavor: flavor, tables: newTableCache(outbox, schema.DefaultColumns(), nil, valueOptions{flavor: flavor}),
		onUpdate: UpdateWarn, observer: f.obs, out: f.sink, rows: newUndecoded(), xa: &xaState{},
		replay: &replayGuard{have: set, server: "db.example:3306", version: "10.11.6-MariaDB", observer: f.obs,
			log: zerolog.New(f.log)}}
	f.s.replay.connected()
	return f
}

func (f *replayFixture) event(t *testing.T, e replication.Event) error {
	t.Helper()
	h := &replication.EventHeader{}
	if _, ok := e.(*replication.GenericEvent); ok {
		h.EventType = replication.XA_PREPARE_LOG_EVENT
	}
	return f.s.handle(context.Background(), &replication.BinlogEvent{Header: h, Event: e})
}

// mariaTxn sends a transaction: its GTID event (flags as MariaDB sets
// them), then the events of its body.
func (f *replayFixture) mariaTxn(t *testing.T, seq uint64, flags byte, body ...replication.Event) error {
	t.Helper()
	evs := append([]replication.Event{&replication.MariadbGTIDEvent{
		GTID: gomysql.MariadbGTID{DomainID: 0, ServerID: 1, SequenceNumber: seq}, Flags: flags}}, body...)
	for _, e := range evs {
		if err := f.event(t, e); err != nil {
			return err
		}
	}
	return nil
}

// warnings are the guard's log lines.
func (f *replayFixture) warnings() []string {
	return strings.Split(strings.TrimSpace(f.log.String()), "\n")
}

func query(q string) *replication.QueryEvent { return &replication.QueryEvent{Query: []byte(q)} }

const standalone = replication.BINLOG_MARIADB_FL_STANDALONE

// TestStreamSkipsReplayed: a server that streams from its first binlog
// although the reader asked to start after a GTID set. Nothing in the set
// is handed over; the transaction of a partial resume, which is not in
// the set, is; XA groups, DDL and anonymous transactions keep their
// meaning; a run is logged once and counted per transaction; a run past
// MaxReplayedRun on one connection stops the reader with an error that
// wraps ErrServerConfig.
func TestStreamSkipsReplayed(t *testing.T) {
	t.Run("replay from the start", func(t *testing.T) {
		f := newReplayFixture(t, gtid.MariaDB, "0-1-3")
		for seq := uint64(1); seq <= 5; seq++ {
			require.NoError(t, f.mariaTxn(t, seq, 0, query("BEGIN"), &replication.XIDEvent{}))
			if seq == 3 {
				assert.Empty(t, f.log.String(), "a run is logged when it ends")
			}
		}
		require.NoError(t, f.event(t, &replication.HeartbeatEvent{}))
		assert.Equal(t, []string{"0-1-4", "0-1-5"}, f.sink.handed)
		assert.Equal(t, []string{"0-1-1", "0-1-2", "0-1-3"}, f.obs.replayed)
		require.Len(t, f.warnings(), 1)
		w := f.warnings()[0]
		for _, want := range []string{`"level":"warn"`, `"first_gtid":"0-1-1"`, `"last_gtid":"0-1-3"`, `"transactions":3`,
			`"server":"db.example:3306"`, `"server_version":"10.11.6-MariaDB"`, `"resume_gtid_set":"0-1-3"`} {
			assert.Contains(t, w, want)
		}
	})

	t.Run("MariaDB without gtid_strict_mode skips nothing", func(t *testing.T) {
		// 0-2-2 after position 0-1-3 may be a new transaction logged out
		// of order: publishing it again is a duplicate, skipping it a loss.
		f := newReplayFixture(t, gtid.MariaDB, "0-1-3")
		f.s.replay.inexact = true
		for seq := uint64(1); seq <= 4; seq++ {
			require.NoError(t, f.mariaTxn(t, seq, 0, query("BEGIN"), &replication.XIDEvent{}))
		}
		assert.Equal(t, []string{"0-1-1", "0-1-2", "0-1-3", "0-1-4"}, f.sink.handed)
		assert.Empty(t, f.obs.replayed)
		assert.Empty(t, f.log.String(), "nothing is logged")
	})

	t.Run("the transaction of a partial resume", func(t *testing.T) {
		f := newReplayFixture(t, gtid.MariaDB, "0-1-3")
		f.s.resumeGTID, f.s.resumeRows = "0-1-4", 2
		for seq := uint64(1); seq <= 3; seq++ {
			require.NoError(t, f.mariaTxn(t, seq, 0, query("BEGIN"), &replication.XIDEvent{}))
			assert.Equal(t, "0-1-4", f.s.resumeGTID, "a replayed transaction leaves the resume position alone")
		}
		require.NoError(t, f.mariaTxn(t, 4, 0, query("BEGIN")))
		assert.Equal(t, 2, f.s.skip, "its first 2 outbox rows are skipped")
		assert.Empty(t, f.s.resumeGTID)
		require.NoError(t, f.event(t, &replication.XIDEvent{}))
		assert.Equal(t, []string{"0-1-4"}, f.sink.handed)
		assert.Len(t, f.obs.replayed, 3)
	})

	t.Run("XA groups", func(t *testing.T) {
		// 0-1-2 prepared 'o' (X'6f'), 0-1-3 committed it: both handed over
		// before, so the table of prepared transactions no longer has 'o'.
		// Read again, the commit must be skipped, not taken for the commit
		// of a transaction prepared before the start (ErrXAUnknown).
		f := newReplayFixture(t, gtid.MariaDB, "0-1-3")
		require.NoError(t, f.mariaTxn(t, 1, 0, query("BEGIN"), &replication.XIDEvent{}))
		require.NoError(t, f.mariaTxn(t, 2, mariadbFlagPreparedXA, query("XA START X'6f',X'',1"), query("XA END X'6f',X'',1"),
			&replication.GenericEvent{Data: []byte{0xff}}))
		require.NoError(t, f.mariaTxn(t, 3, standalone, query("XA COMMIT X'6f',X'',1")))
		assert.Empty(t, f.s.xa.prepared)
		// A commit the reader has not seen is still one.
		err := f.mariaTxn(t, 4, standalone, query("XA COMMIT X'70',X'',1"))
		var xe *XAError
		require.ErrorAs(t, err, &xe)
		assert.ErrorIs(t, err, ErrXAUnknown)
		assert.Equal(t, []string{"0-1-1", "0-1-2", "0-1-3"}, f.obs.replayed)
		assert.Empty(t, f.sink.handed)
	})

	t.Run("DDL of a replayed transaction is not applied", func(t *testing.T) {
		f := newReplayFixture(t, gtid.MariaDB, "0-1-1")
		require.NoError(t, f.mariaTxn(t, 1, standalone, query("ALTER TABLE shop.outbox ADD COLUMN x INT")))
		assert.Empty(t, f.obs.ddl)
		require.NoError(t, f.mariaTxn(t, 2, standalone, query("ALTER TABLE shop.outbox ADD COLUMN y INT")))
		assert.Equal(t, []string{"ALTER TABLE shop.outbox ADD COLUMN y INT"}, f.obs.ddl)
		assert.Equal(t, []string{"0-1-2"}, f.sink.handed)
	})

	t.Run("the row data of a replayed transaction is released", func(t *testing.T) {
		f := newReplayFixture(t, gtid.MariaDB, "0-1-1")
		rows := &replication.RowsEvent{}
		payload := &replication.RowsEvent{}
		f.s.rows.put(rows, []byte("row image"))
		f.s.rows.put(payload, []byte("row image"))
		require.NoError(t, f.mariaTxn(t, 1, 0, query("BEGIN"), rows,
			&replication.TransactionPayloadEvent{Events: []*replication.BinlogEvent{{Header: &replication.EventHeader{}, Event: payload}}},
			&replication.XIDEvent{}))
		assert.Empty(t, f.s.rows.m, "the parser's undecoded row data is dropped with the transaction")
		assert.Empty(t, f.sink.handed)
	})

	t.Run("MySQL, anonymous transactions are never skipped", func(t *testing.T) {
		const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
		f := newReplayFixture(t, gtid.MySQL, uuid+":1-2")
		sid, _, _, err := gtid.ParseMySQLGTID(uuid + ":1")
		require.NoError(t, err)
		for _, e := range []replication.Event{
			&replication.GTIDEvent{SID: sid[:], GNO: 2}, query("BEGIN"), &replication.XIDEvent{},
			&replication.GTIDEvent{}, query("BEGIN"), &replication.XIDEvent{}, // anonymous
			&replication.GTIDEvent{SID: sid[:], GNO: 3}, query("BEGIN"), &replication.XIDEvent{},
		} {
			require.NoError(t, f.event(t, e))
		}
		assert.Equal(t, []string{"", uuid + ":3"}, f.sink.handed)
		assert.Equal(t, []string{uuid + ":2"}, f.obs.replayed)
	})

	t.Run("a run past the bound stops the reader", func(t *testing.T) {
		f := newReplayFixture(t, gtid.MariaDB, fmt.Sprintf("0-1-%d", 2*MaxReplayedRun))
		var err error
		seq := uint64(1)
		for ; err == nil && seq <= 2*MaxReplayedRun; seq++ {
			err = f.mariaTxn(t, seq, 0, query("BEGIN"), &replication.XIDEvent{})
		}
		require.Error(t, err)
		assert.Equal(t, uint64(MaxReplayedRun+2), seq, "stopped at the first transaction past the bound")
		assert.ErrorIs(t, err, ErrPositionIgnored)
		assert.ErrorIs(t, err, ErrServerConfig, "exit code 2")
		var pe *PositionIgnoredError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, PositionIgnoredError{Server: "db.example:3306", Version: "10.11.6-MariaDB", Start: "0-1-2000",
			First: "0-1-1", Last: fmt.Sprintf("0-1-%d", MaxReplayedRun+1), Count: MaxReplayedRun + 1}, *pe)
		for _, want := range []string{"binlog server db.example:3306 (version 10.11.6-MariaDB)", "ignores the GTID position",
			"1001 transactions in a row", "0-1-1 to 0-1-1001", "not published again", "BINLOG_THROUGH_GTID"} {
			assert.Contains(t, err.Error(), want)
		}
		assert.Empty(t, f.sink.handed)
		assert.Len(t, f.warnings(), 1)
	})

	t.Run("the bound is per connection and per run", func(t *testing.T) {
		f := newReplayFixture(t, gtid.MariaDB, fmt.Sprintf("0-1-%d", 2*MaxReplayedRun))
		for seq := uint64(1); seq <= MaxReplayedRun; seq++ {
			require.NoError(t, f.mariaTxn(t, seq, 0, query("BEGIN"), &replication.XIDEvent{}))
		}
		// A new connection starts a new run (the reader's session does
		// this after a lost connection).
		f.s.interrupted()
		f.s.replay.connected()
		for seq := uint64(1); seq <= MaxReplayedRun; seq++ {
			require.NoError(t, f.mariaTxn(t, seq, 0, query("BEGIN"), &replication.XIDEvent{}))
		}
		require.NoError(t, f.mariaTxn(t, 2*MaxReplayedRun+1, 0, query("BEGIN"), &replication.XIDEvent{}))
		for seq := uint64(MaxReplayedRun + 1); seq <= 2*MaxReplayedRun; seq++ {
			require.NoError(t, f.mariaTxn(t, seq, 0, query("BEGIN"), &replication.XIDEvent{}), "a new run")
		}
		f.s.replay.endRun()
		assert.Equal(t, []string{fmt.Sprintf("0-1-%d", 2*MaxReplayedRun+1)}, f.sink.handed)
		assert.Len(t, f.warnings(), 3)
		assert.Len(t, f.obs.replayed, 3*MaxReplayedRun)
	})
}

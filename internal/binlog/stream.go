package binlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// UpdatePolicy says what to do with an UPDATE of an outbox row.
type UpdatePolicy string

const (
	// UpdateWarn logs the update, counts it and goes on.
	UpdateWarn UpdatePolicy = "warn"
	// UpdateFail stops the router with ErrOutboxUpdate.
	UpdateFail UpdatePolicy = "fail"
)

// Observer receives counts from the stream. Calls come from the reading
// goroutine and must not block.
type Observer interface {
	// OutboxUpdate is called for each UPDATE rows event of an outbox table
	// under the warn policy.
	OutboxUpdate(table, gtid string, rows int)
	// DDL is called for a DDL statement that may touch an outbox table.
	DDL(gtid, query string)
	// Reconnect is called before each reconnect after a lost connection.
	Reconnect()
	// Replayed is called for each transaction the server sent although
	// the GTID set the reader asked it to start after already contains
	// it (the server ignores the position). It is not handed over.
	Replayed(gtid string)
}

type nopObserver struct{}

func (nopObserver) OutboxUpdate(string, string, int) {}
func (nopObserver) DDL(string, string)               {}
func (nopObserver) Reconnect()                       {}
func (nopObserver) Replayed(string)                  {}

// sink receives what the stream decodes. addRows and done may block (for
// backpressure) and then return ctx's error; heartbeat never blocks.
type sink interface {
	// addRows hands over the rows of one rows event, in order (sizes[i]
	// is what rows[i] counts against the queue's bound), and returns how
	// many it took: all of them unless it returns an error. It must not
	// keep rows or sizes, only the OutboxRow values.
	addRows(ctx context.Context, rows []OutboxRow, sizes []int, pos Position) (int, error)
	done(ctx context.Context, t *Txn, pos Position) error
	heartbeat(pos Position)
}

// stream turns binlog events into Batches. It is a state machine over one
// ordered event sequence and is shared by live replication and file
// parsing. Not safe for concurrent use.
type stream struct {
	flavor   gtid.Flavor
	tables   *tableCache
	onUpdate UpdatePolicy
	observer Observer
	guard    TableGuard // nil: none
	out      sink
	rows     *undecoded // row data of outbox INSERTs left undecoded by the parser

	pos Position

	txn     *Txn
	begun   bool // BEGIN seen (or implied): a later non-COMMIT query is part of the transaction
	emitted int  // outbox rows of txn already handed to out

	// held are the decoded rows of the rows event being read, handed to
	// out together when it ends (one hand-over per event, not per row);
	// heldSizes what each counts against the queue's bound.
	held      []OutboxRow
	heldSizes []int

	// resume skips rows already delivered of a transaction that was
	// interrupted by a lost connection, or by a restart from a checkpoint
	// inside it, and is read again.
	resumeGTID string
	resumeRows int
	skip       int

	// XA: the table of prepared transactions; whether the open group is
	// an XA group whose rows are held back until its outcome is known
	// (and whether it has outbox rows); where the open group starts.
	xa         *xaState
	xaGroup    bool
	xaOutbox   bool
	groupStart Position
	// target is set on a stream that reads a prepare group again: its
	// rows belong to target, the transaction that commits it. readGTID
	// is the GTID the group was read with.
	target   *Txn
	readGTID string

	// replay, when set, skips transactions the reader already has
	// (replayGuard); replaying is set while the open group is one.
	replay    *replayGuard
	replaying bool
}

func (s *stream) handle(ctx context.Context, ev *replication.BinlogEvent) error {
	start := Position{File: s.pos.File}
	if ev.Header.LogPos > 0 {
		start.Pos = ev.Header.LogPos - min(ev.Header.EventSize, ev.Header.LogPos)
		s.pos.Pos = ev.Header.LogPos
	}
	if s.replaying {
		// A group the reader already has: nothing of it counts (its
		// rows, its DDL, its XA statements) until the next group.
		switch ev.Event.(type) {
		case *replication.RotateEvent, *replication.GTIDEvent, *replication.GtidTaggedLogEvent,
			*replication.MariadbGTIDEvent, *replication.HeartbeatEvent:
		default:
			s.discard(ev)
			return nil
		}
	}
	switch e := ev.Event.(type) {
	case *replication.RotateEvent:
		s.pos = Position{File: string(e.NextLogName), Pos: uint32(e.Position)}
	case *replication.GTIDEvent:
		return s.beginMySQL(e, ev.Header.Timestamp, start)
	case *replication.GtidTaggedLogEvent:
		return s.beginMySQL(&e.GTIDEvent, ev.Header.Timestamp, start)
	case *replication.MariadbGTIDEvent:
		return s.beginMariaDB(e, ev.Header.Timestamp, start)
	case *replication.QueryEvent:
		return s.query(ctx, e)
	case *replication.XIDEvent:
		return s.end(ctx)
	case *replication.GenericEvent:
		if ev.Header.EventType == replication.XA_PREPARE_LOG_EVENT {
			if s.target != nil {
				return errRereadDone
			}
			return s.xaPrepared(ctx, e.Data)
		}
	case *replication.RowsEvent:
		return s.rowsEvent(ctx, e, ev.Header.EventType)
	case *replication.TransactionPayloadEvent:
		for _, inner := range e.Events {
			if err := s.handle(ctx, inner); err != nil {
				return err
			}
		}
	case *replication.HeartbeatEvent:
		if s.txn == nil && s.target == nil {
			if s.replay != nil {
				s.replay.endRun() // caught up: the run of skipped transactions is over
			}
			s.out.heartbeat(s.pos)
		}
	}
	return nil
}

// discard drops an event of a skipped group, with the row data the
// parser kept for it.
func (s *stream) discard(ev *replication.BinlogEvent) {
	switch e := ev.Event.(type) {
	case *replication.RowsEvent:
		s.rows.take(e)
	case *replication.TransactionPayloadEvent:
		for _, inner := range e.Events {
			s.discard(inner)
		}
	}
}

// begin opens the group of transaction t. A transaction the reader
// already has (s.replay) opens a group that is skipped whole; the error
// is the replayGuard's.
func (s *stream) begin(t *Txn, start Position) error {
	s.groupStart, s.xaGroup, s.xaOutbox = start, false, false
	if s.target != nil {
		// Reading a prepare group again: its rows are the committing
		// transaction's, and skip carries over from it.
		s.readGTID = t.GTID
		s.txn, s.begun = s.target, false
		return nil
	}
	s.replaying = false
	if s.replay != nil {
		skip, err := s.replay.skip(t)
		if err != nil {
			return err
		}
		if skip {
			s.txn, s.begun, s.emitted, s.skip, s.replaying = nil, false, 0, 0, true
			return nil
		}
	}
	s.txn, s.begun, s.emitted = t, false, 0
	s.skip = 0
	// The resumed transaction is normally the first one sent; one that
	// comes later (another server's binlog order) is still recognised.
	if s.resumeGTID != "" && t.GTID == s.resumeGTID {
		s.skip = s.resumeRows
		s.resumeGTID, s.resumeRows = "", 0
	}
	return nil
}

func (s *stream) beginMySQL(e *replication.GTIDEvent, ts uint32, start Position) error {
	t := &Txn{Time: time.Unix(int64(ts), 0)}
	if e.ImmediateCommitTimestamp > 0 {
		t.Time = time.UnixMicro(int64(e.ImmediateCommitTimestamp))
	}
	id := gtidID{flavor: gtid.MySQL, gno: e.GNO, tag: e.Tag.String()}
	copy(id.sid[:], e.SID)
	if len(e.SID) == len(id.sid) && e.GNO > 0 {
		t.GTID = string(gtid.AppendMySQL(nil, id.sid, id.tag, e.GNO))
	} else {
		// An anonymous transaction (gtid_mode OFF): it has no GTID and
		// cannot move a GTID set.
		id.flavor = ""
	}
	t.id = id
	return s.begin(t, start)
}

func (s *stream) beginMariaDB(e *replication.MariadbGTIDEvent, ts uint32, start Position) error {
	g := e.GTID
	t := &Txn{
		GTID: string(gtid.AppendMariaDB(nil, g.DomainID, g.ServerID, g.SequenceNumber)),
		Time: time.Unix(int64(ts), 0),
		id:   gtidID{flavor: gtid.MariaDB, domain: g.DomainID, server: g.ServerID, seq: g.SequenceNumber},
	}
	if err := s.begin(t, start); err != nil || s.replaying {
		return err
	}
	// A MariaDB GTID event opens the group itself; only a standalone
	// group (DDL, XA COMMIT, XA ROLLBACK) ends with its single query.
	s.begun = !e.IsStandalone()
	// An XA PREPARE group: its rows wait for the XA COMMIT.
	s.xaGroup = e.Flags&mariadbFlagPreparedXA != 0 && s.target == nil
	return nil
}

// mariadbFlagPreparedXA marks the GTID event of a MariaDB XA PREPARE group
// (FL_PREPARED_XA); go-mysql names the flags below it only.
const mariadbFlagPreparedXA = 64

var (
	queryBegin  = []byte("BEGIN")
	queryCommit = []byte("COMMIT")
)

func (s *stream) query(ctx context.Context, e *replication.QueryEvent) error {
	q := bytes.TrimSpace(e.Query)
	switch {
	case bytes.EqualFold(q, queryBegin):
		s.begun = true
		return nil
	case bytes.EqualFold(q, queryCommit):
		return s.end(ctx)
	}
	if handled, err := s.xaQuery(ctx, q); handled {
		return err
	}
	// Anything else is DDL or a statement inside a transaction.
	if s.guard != nil {
		if err := s.guard.DDL(string(e.Schema), string(q)); err != nil {
			return err
		}
	}
	if s.tables.outbox.mentionedIn(q) {
		gtidText := ""
		if s.txn != nil {
			gtidText = s.txn.GTID
		}
		s.observer.DDL(gtidText, string(q))
		if err := s.statement(string(q), string(e.Schema), gtidText); err != nil {
			return err
		}
	}
	if !s.begun {
		return s.end(ctx)
	}
	return nil
}

// rowsEvent hands over the outbox rows of a rows event: every row decoded
// before an error too, as they were before it.
func (s *stream) rowsEvent(ctx context.Context, e *replication.RowsEvent, typ replication.EventType) (err error) {
	defer func() {
		if herr := s.handOver(ctx); err == nil {
			err = herr
		}
	}()
	data, undecoded := s.rows.take(e)
	if e.Table != nil && s.guard != nil && !s.tables.outbox.has(e.Table.Schema, e.Table.Table) {
		if err := s.guard.Rows(string(e.Table.Schema), string(e.Table.Table)); err != nil {
			return err
		}
	}
	if e.Table == nil || !s.tables.outbox.has(e.Table.Schema, e.Table.Table) || s.txn == nil {
		return nil
	}
	if s.xaGroup {
		// Held back: read again from the binlog if the XA transaction
		// commits.
		s.xaOutbox = true
		return nil
	}
	switch e.Type() {
	case replication.EnumRowsEventTypeInsert:
	case replication.EnumRowsEventTypeUpdate:
		name := qualified(e.Table)
		if s.onUpdate == UpdateFail {
			return &EventError{Table: name, GTID: s.txn.GTID, Err: ErrOutboxUpdate,
				Fix: "outbox rows are immutable: insert a new event instead of updating, or run with --on-update=warn to ignore updates"}
		}
		s.observer.OutboxUpdate(name, s.txn.GTID, 1)
		return nil
	default: // DELETE: apps may clean the table right after inserting.
		return nil
	}
	t, err := s.tables.lookup(ctx, e.Table, s.txn.GTID)
	if err != nil {
		return err
	}
	if len(e.ColumnBitmap1) > 0 {
		if ord := missingMapped(&t.layout, e.ColumnBitmap1); ord >= 0 {
			return &EventError{Table: t.name, GTID: s.txn.GTID,
				Err: settingError{fmt.Errorf("%w: the row image leaves out mapped column %s (binlog_row_image is not FULL on the server)", ErrUnmappable, t.columnName(ord))},
				Fix: "set binlog_row_image=FULL on the server (SET GLOBAL and in its configuration; sessions opened before keep their setting until they reconnect), then publish the rows written meanwhile with `binlog-router replay` or from the table"}
		}
	}
	done := 0
	if undecoded {
		var fastErr error
		if done, fastErr = s.fastRows(ctx, t, e, typ, data); fastErr == nil {
			return nil
		} else if ctx.Err() != nil {
			return fastErr
		}
		// go-mysql's decoder takes over after the rows handed over.
		if err := e.DecodeData(0, data); err != nil {
			return &EventError{Table: t.name, GTID: s.txn.GTID,
				Err: fmt.Errorf("%w: decoding the row image: %v", ErrUnmappable, err)}
		}
	}
	for _, values := range e.Rows[min(done, len(e.Rows)):] {
		if len(values) != t.layout.NumColumns {
			return &EventError{Table: t.name, GTID: s.txn.GTID,
				Err: fmt.Errorf("%w: row has %d columns, the table's layout %d", ErrUnmappable, len(values), t.layout.NumColumns)}
		}
		var r OutboxRow
		rowFromValues(t, values, &r)
		if err := s.emit(ctx, t, r); err != nil {
			return err
		}
	}
	return nil
}

// errNoCodec sends a rows event to go-mysql's decoder.
var errNoCodec = errors.New("no row codec for the table")

// fastRows hands over the rows of an undecoded INSERT event decoded by the
// table's rowCodec and returns how many it handed over; an error other
// than the context's leaves the rest to go-mysql's decoder.
func (s *stream) fastRows(ctx context.Context, t *table, e *replication.RowsEvent, typ replication.EventType, data []byte) (int, error) {
	if typ != replication.WRITE_ROWS_EVENTv2 && typ != replication.WRITE_ROWS_EVENTv1 {
		return 0, errNoCodec // compressed (MariaDB) or a format it does not know
	}
	c := t.codecFor(e.Table)
	if !c.usable || int(e.ColumnCount) != len(c.cols) {
		return 0, errNoCodec
	}
	n := 0
	for pos := 0; pos < len(data); n++ {
		var r OutboxRow
		k, err := c.row(data[pos:], e.ColumnBitmap1, &r)
		if err != nil {
			return n, err
		}
		pos += k
		rowIdentity(t, &r)
		if err := s.emit(ctx, t, r); err != nil {
			return n, err
		}
	}
	return n, nil
}

// emit holds one row for the hand-over at the end of its rows event,
// unless it was delivered before a reconnect.
func (s *stream) emit(_ context.Context, t *table, r OutboxRow) error {
	if s.skip > 0 {
		s.skip--
		s.emitted++
		return nil
	}
	r.Txn = s.txn
	if err := t.convert(&r); err != nil {
		return &EventError{Table: t.name, GTID: s.txn.GTID, Err: fmt.Errorf("%w: %w", ErrUnmappable, err),
			Fix: "fix the stored value or the column's character set"}
	}
	s.held = append(s.held, r)
	s.heldSizes = append(s.heldSizes, len(r.Payload)+len(r.EventID)+len(r.AggregateID)+len(r.EventType)+len(r.Headers)+160)
	return nil
}

// handOver hands the held rows to out and forgets them.
func (s *stream) handOver(ctx context.Context) error {
	if len(s.held) == 0 {
		return nil
	}
	n, err := s.out.addRows(ctx, s.held, s.heldSizes, s.pos)
	s.emitted += n
	clear(s.held) // no references into the packet stay behind
	s.held, s.heldSizes = s.held[:0], s.heldSizes[:0]
	return err
}

func (s *stream) end(ctx context.Context) error {
	if s.target != nil {
		return fmt.Errorf("%w: transaction %s read again at %s ended without XA PREPARE", ErrXAPrepareMissing, s.readGTID, s.pos.File)
	}
	if s.txn == nil {
		// An event group whose GTID we did not see (we started inside
		// it, or it is anonymous): nothing to deliver.
		s.begun = false
		return nil
	}
	t := s.txn
	s.txn, s.begun = nil, false
	if s.tables.defs != nil {
		t.Layouts = s.tables.defs.snapshot()
	}
	return s.out.done(ctx, t, s.pos)
}

// interrupted records how far the open transaction was delivered before
// the connection was lost, so that a new connection, which starts at the
// beginning of that transaction, skips the rows already delivered.
func (s *stream) interrupted() {
	if s.txn != nil && s.txn.GTID != "" {
		s.resumeGTID, s.resumeRows = s.txn.GTID, s.emitted+s.skip
	}
	s.txn, s.begun, s.emitted, s.skip, s.replaying = nil, false, 0, 0, false
	s.xaGroup, s.xaOutbox = false, false
	s.tables.reset()
	s.rows.reset()
}

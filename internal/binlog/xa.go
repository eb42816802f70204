package binlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// PreparedXA is an XA transaction whose PREPARE is in the binlog and whose
// COMMIT or ROLLBACK is not yet. Its rows live only in the binlog, in the
// prepare group at File:Pos; they are read again from there at its COMMIT.
// The checkpoint stores the table of them as it is (the JSON names are the
// checkpoint record's), and Reader.SetPrepared takes it back.
type PreparedXA struct {
	XID    string `json:"xid"`         // as the servers log it: X'<gtrid hex>',X'<bqual hex>',<format id>
	GTID   string `json:"gtid"`        // the prepare group's GTID
	File   string `json:"binlog_file"` // binlog file of the prepare group
	Pos    uint32 `json:"binlog_pos"`  // position of the prepare group's first (GTID) event
	Outbox bool   `json:"outbox"`      // the prepare group has row events of outbox tables
}

// PreparedSet is the table of prepared XA transactions after a
// transaction, in prepare order. It is never changed once made.
type PreparedSet struct {
	List []PreparedXA
}

var (
	// ErrXAUnknown means an XA COMMIT whose PREPARE the router never saw:
	// it lies before the position the router started from, and the table
	// of prepared transactions it started with does not have it.
	ErrXAUnknown = errors.New("XA transaction prepared before the start position")
	// ErrXAPrepareMissing means the prepare group of a prepared XA
	// transaction is not where the table of prepared transactions says.
	ErrXAPrepareMissing = errors.New("XA prepare group not found")
)

// XAError names the XA transaction whose rows cannot be read. It wraps
// ErrXAUnknown, ErrXAPrepareMissing or a *PurgedError (ErrBinlogPurged:
// the binlog file of the prepare group was purged).
type XAError struct {
	XID        string     // as an application writes it: 'order-42'
	CommitGTID string     // the transaction that commits it
	Prepared   PreparedXA // the prepare group, when known
	Err        error
}

func (e *XAError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "XA transaction %s committed in transaction %s: ", e.XID, e.CommitGTID)
	switch {
	case errors.Is(e.Err, ErrXAUnknown):
		fmt.Fprintf(&b, "%v: its rows are in a prepare group the router never read, so they cannot be published (nothing after it was published either). "+
			"Start the router from a GTID set before its XA PREPARE (`binlog-router checkpoint set --gtid <set>`, or a new --name with --start gtid:<set>); "+
			"rows of transactions between that set and this one are then published again", e.Err)
	case errors.Is(e.Err, ErrBinlogPurged):
		why := e.Err.Error()
		var pe *PurgedError
		if errors.As(e.Err, &pe) && pe.Server != "" {
			why = pe.Server
		}
		fmt.Fprintf(&b, "its rows were prepared in transaction %s in binlog %s at position %d, which the server no longer has (%s). "+
			"Nothing of it or after it was published; recover its outbox rows from the outbox table or a backup, then move the checkpoint past this transaction with `binlog-router checkpoint set --gtid <set>`",
			e.Prepared.GTID, e.Prepared.File, e.Prepared.Pos, why)
	default:
		fmt.Fprintf(&b, "reading its prepare group (transaction %s, binlog %s position %d): %v", e.Prepared.GTID, e.Prepared.File, e.Prepared.Pos, e.Err)
	}
	return b.String()
}

func (e *XAError) Unwrap() error { return e.Err }

// rereader reads the binlog again from a position: it calls fn with each
// event from file:pos on (after the format description) until fn returns
// errRereadDone. rows receives the row data of outbox INSERTs, as the
// parser's rows decoder does for the main stream. An error that is neither
// fn's nor a *XAError is a lost connection: the caller may retry.
type rereader interface {
	reread(ctx context.Context, file string, pos uint32, rows *undecoded, fn func(*replication.BinlogEvent) error) error
}

// errRereadDone ends a reread.
var errRereadDone = errors.New("prepare group read")

// xaState is the stream's table of prepared XA transactions and how to
// read a prepare group again.
type xaState struct {
	prepared []PreparedXA // in prepare order
	reread   rereader     // nil: prepare groups cannot be read again
}

func (x *xaState) find(key string) int {
	return slices.IndexFunc(x.prepared, func(p PreparedXA) bool { return p.XID == key })
}

func (x *xaState) snapshot() *PreparedSet {
	return &PreparedSet{List: slices.Clone(x.prepared)}
}

var (
	queryXAStart    = []byte("XA START")
	queryXABegin    = []byte("XA BEGIN")
	queryXAEnd      = []byte("XA END")
	queryXACommit   = []byte("XA COMMIT")
	queryXARollback = []byte("XA ROLLBACK")
)

func hasPrefixFold(s, prefix []byte) bool {
	return len(s) >= len(prefix) && bytes.EqualFold(s[:len(prefix)], prefix)
}

// xaQuery handles the XA statements the servers log; handled reports
// whether q was one.
func (s *stream) xaQuery(ctx context.Context, q []byte) (handled bool, err error) {
	switch {
	case hasPrefixFold(q, queryXAStart), hasPrefixFold(q, queryXABegin):
		// MySQL opens an XA group with XA START; whether it prepares or
		// commits in one phase is known only at its end.
		s.begun, s.xaGroup = true, s.target == nil
		return true, nil
	case hasPrefixFold(q, queryXAEnd):
		return true, nil
	case hasPrefixFold(q, queryXACommit):
		return true, s.xaEnd(ctx, q[len(queryXACommit):], true)
	case hasPrefixFold(q, queryXARollback):
		return true, s.xaEnd(ctx, q[len(queryXARollback):], false)
	}
	return false, nil
}

// xaPrepared handles an XA_PREPARE_LOG_EVENT: the end of a prepare group,
// or, with one_phase, of an XA transaction committed in one phase (MySQL).
func (s *stream) xaPrepared(ctx context.Context, data []byte) error {
	x, onePhase, err := parseXAPrepare(data)
	if err != nil {
		return err
	}
	if s.txn == nil {
		s.xaGroup, s.begun = false, false
		return nil
	}
	p := PreparedXA{XID: x.key(), GTID: s.txn.GTID, File: s.groupStart.File, Pos: s.groupStart.Pos, Outbox: s.xaOutbox}
	if onePhase {
		// The group's rows were held back until its outcome was known:
		// it committed, read them again.
		if p.Outbox {
			if err := s.rereadGroup(ctx, x, p); err != nil {
				return err
			}
		}
		return s.end(ctx)
	}
	if i := s.xa.find(p.XID); i >= 0 {
		s.xa.prepared = slices.Delete(s.xa.prepared, i, i+1)
	}
	s.xa.prepared = append(s.xa.prepared, p)
	s.txn.XA = s.xa.snapshot()
	return s.end(ctx)
}

// xaEnd handles XA COMMIT (publish the prepared rows as this
// transaction's) and XA ROLLBACK (publish nothing) of a prepared XA
// transaction.
func (s *stream) xaEnd(ctx context.Context, text []byte, commit bool) error {
	if s.txn == nil {
		return s.end(ctx)
	}
	x, err := parseXIDText(bytes.TrimSpace(text))
	if err != nil {
		return fmt.Errorf("transaction %s: %w", s.txn.GTID, err)
	}
	i := s.xa.find(x.key())
	if i < 0 {
		if !commit {
			return s.end(ctx) // nothing of it can have been published
		}
		return &XAError{XID: x.String(), CommitGTID: s.txn.GTID, Err: ErrXAUnknown}
	}
	p := s.xa.prepared[i]
	if commit && p.Outbox {
		if err := s.rereadGroup(ctx, x, p); err != nil {
			return err
		}
	}
	// The entry goes only once the rows are handed over: a reconnect
	// inside the reread finds it again.
	s.xa.prepared = slices.Delete(s.xa.prepared, i, i+1)
	s.txn.XA = s.xa.snapshot()
	return s.end(ctx)
}

// rereadGroup hands over the outbox rows of the prepare group p as rows of
// the current transaction, reading them again from the binlog: prepared
// rows are never held in memory.
func (s *stream) rereadGroup(ctx context.Context, x xid, p PreparedXA) error {
	xaErr := func(err error) error {
		return &XAError{XID: x.String(), CommitGTID: s.txn.GTID, Prepared: p, Err: err}
	}
	if s.xa.reread == nil {
		return xaErr(errors.New("this reader cannot read prepare groups again"))
	}
	// The prepared transaction holds its tables' metadata locks until its
	// outcome, so the definitions in force now are those of the group.
	tables := newTableCache(s.tables.outbox, s.tables.columns, s.tables.source, s.tables.values)
	tables.defs = s.tables.defs
	child := &stream{
		flavor:   s.flavor,
		tables:   tables,
		onUpdate: s.onUpdate,
		observer: nopObserver{},
		out:      s.out,
		rows:     newUndecoded(),
		pos:      Position{File: p.File},
		xa:       &xaState{},
		target:   s.txn,
		skip:     s.skip,
	}
	seen := false
	err := s.xa.reread.reread(ctx, p.File, p.Pos, child.rows, func(ev *replication.BinlogEvent) error {
		switch ev.Event.(type) {
		case *replication.GTIDEvent, *replication.GtidTaggedLogEvent, *replication.MariadbGTIDEvent:
			if seen {
				return xaErr(fmt.Errorf("%w: the group at %s:%d has no XA PREPARE", ErrXAPrepareMissing, p.File, p.Pos))
			}
			seen = true
			if err := child.handle(ctx, ev); err != nil {
				return err
			}
			if child.readGTID != p.GTID {
				return xaErr(fmt.Errorf("%w: %s:%d holds transaction %s", ErrXAPrepareMissing, p.File, p.Pos, child.readGTID))
			}
			return nil
		case *replication.RotateEvent, *replication.FormatDescriptionEvent:
			return child.handle(ctx, ev)
		}
		if !seen {
			if ev.Header.EventType == replication.STOP_EVENT {
				return xaErr(fmt.Errorf("%w: %s ends before position %d", ErrXAPrepareMissing, p.File, p.Pos))
			}
			if ev.Header.LogPos > p.Pos {
				return xaErr(fmt.Errorf("%w: no transaction starts at %s:%d", ErrXAPrepareMissing, p.File, p.Pos))
			}
			return nil // a fake event of the dump's start
		}
		return child.handle(ctx, ev)
	})
	s.emitted += child.emitted
	s.skip = child.skip
	if errors.Is(err, errRereadDone) {
		return nil
	}
	var xe *XAError
	var lost *connLost
	switch {
	case err == nil:
		return xaErr(fmt.Errorf("%w: the binlog ended inside the group at %s:%d", ErrXAPrepareMissing, p.File, p.Pos))
	case errors.As(err, &xe), errors.As(err, &lost), ctx.Err() != nil:
		return err
	}
	return xaErr(err)
}

// connLost is a lost connection of a reread: the reader reconnects and
// reads the committing transaction again, skipping the rows handed over.
type connLost struct{ err error }

func (e *connLost) Error() string { return "reading a prepare group again: " + e.err.Error() }
func (e *connLost) Unwrap() error { return e.err }

// reread reads the binlog from file:pos over a second, short-lived
// replication connection with its own server id (a replica id the server
// already serves would drop the main connection).
func (r *Reader) reread(ctx context.Context, file string, pos uint32, rows *undecoded, fn func(*replication.BinlogEvent) error) error {
	outbox := r.outbox
	cfg, err := r.syncerConfig(rereadServerID(), func(e *replication.RowsEvent, data []byte) error {
		return decodeOutboxRows(outbox, rows, e, data)
	})
	if err != nil {
		return err
	}
	// A reread reads past events until it returns: no heartbeats.
	cfg.HeartbeatPeriod, cfg.DiscardGTIDSet = 0, false
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	streamer, err := syncer.StartSync(gomysql.Position{Name: file, Pos: pos})
	if err != nil {
		return rereadErr(err, file, pos)
	}
	for {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			return rereadErr(err, file, pos)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// rereadErr classifies a reread's connection error: a purged file is a
// *PurgedError, other server refusals are final, the rest is a lost
// connection.
func rereadErr(err error, file string, pos uint32) error {
	if f := classify(err, fmt.Sprintf("%s:%d", file, pos)); f != nil {
		return f
	}
	if _, _, ok := mysqlCode(err); ok {
		return err
	}
	return &connLost{err}
}

// rereadServerID is a replica id in [2^31, 2^32-1), far from the ids
// operators give replicas, different for every reread.
func rereadServerID() uint32 { return 1<<31 + rand.Uint32N(1<<31-1) }

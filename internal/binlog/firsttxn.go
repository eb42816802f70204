package binlog

import (
	"bytes"
	"context"
	"fmt"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// EventKind classifies the events of a transaction for TxnEvent.
type EventKind int

// Event kinds, in the order a transaction has them.
const (
	EventGTID     EventKind = iota // the GTID event (MariaDB: it begins the transaction)
	EventBegin                     // MySQL's BEGIN query
	EventTableMap                  // a TABLE_MAP event
	EventRows                      // a rows event (INSERT, UPDATE or DELETE)
	EventCommit                    // XID, or a COMMIT query
	EventOther                     // anything else sent inside the transaction
)

// TxnEvent is one event of a transaction as a replica receives it.
type TxnEvent struct {
	Kind   EventKind
	File   string // binlog file holding the event
	Pos    uint32 // position of the event's first byte
	Outbox bool   // rows event of an outbox table
	Insert bool   // rows event of an INSERT (WRITE_ROWS)
	Rows   int    // rows in a rows event
}

// FirstTxn reads the first transaction the server sends a replica that
// starts after from, over a short-lived dump connection with its own
// replica server id, and calls fn with each of its events in order: from
// its GTID event to the event that commits it. It returns the
// transaction's GTID. Only the events' kinds and row counts are kept, so
// a transaction of any size is read in bounded memory. It waits for a
// transaction until ctx ends; fn's error ends the read and is returned.
func (r *Reader) FirstTxn(ctx context.Context, from *gtid.Set, fn func(TxnEvent) error) (string, error) {
	start, err := gomysql.ParseGTIDSet(string(r.server.Flavor), from.String())
	if err != nil {
		return "", fmt.Errorf("start position %q: %w", from.String(), err)
	}
	cfg, err := r.syncerConfig(rereadServerID(), nil)
	if err != nil {
		return "", err
	}
	cfg.HeartbeatPeriod = 0
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	streamer, err := syncer.StartSyncGTID(start)
	if err != nil {
		return "", err
	}
	d := &txnDescriber{outbox: r.outbox}
	for {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			if f := classify(err, from.String()); f != nil {
				return d.txn, f
			}
			return d.txn, err
		}
		events := []*replication.BinlogEvent{ev}
		if p, ok := ev.Event.(*replication.TransactionPayloadEvent); ok {
			events = p.Events // MySQL's compressed transaction: its events are inside
		}
		for _, ev := range events {
			e, in := d.describe(ev)
			if !in {
				continue
			}
			if err := fn(e); err != nil {
				return d.txn, err
			}
			if e.Kind == EventCommit {
				return d.txn, nil
			}
		}
	}
}

// txnDescriber turns the events of a dump into TxnEvents.
type txnDescriber struct {
	outbox outboxSet
	file   string // current binlog file
	txn    string // GTID of the transaction, once its GTID event came
}

// describe returns ev as a TxnEvent and whether it belongs to the
// transaction (events before its GTID event do not).
func (d *txnDescriber) describe(ev *replication.BinlogEvent) (TxnEvent, bool) {
	e := TxnEvent{Kind: EventOther, File: d.file}
	if ev.Header.LogPos > 0 {
		e.Pos = ev.Header.LogPos - min(ev.Header.EventSize, ev.Header.LogPos)
	}
	switch v := ev.Event.(type) {
	case *replication.RotateEvent:
		d.file = string(v.NextLogName)
		return e, false
	case *replication.MariadbGTIDEvent:
		g := v.GTID
		d.txn, e.Kind = string(gtid.AppendMariaDB(nil, g.DomainID, g.ServerID, g.SequenceNumber)), EventGTID
	case *replication.GTIDEvent:
		var sid [16]byte
		copy(sid[:], v.SID)
		d.txn, e.Kind = string(gtid.AppendMySQL(nil, sid, v.Tag.String(), v.GNO)), EventGTID
	case *replication.QueryEvent:
		switch {
		case bytes.EqualFold(v.Query, queryBegin):
			e.Kind = EventBegin
		case bytes.EqualFold(v.Query, queryCommit):
			e.Kind = EventCommit
		}
	case *replication.XIDEvent:
		e.Kind = EventCommit
	case *replication.TableMapEvent:
		e.Kind = EventTableMap
	case *replication.RowsEvent:
		e.Kind, e.Rows = EventRows, len(v.Rows)
		switch ev.Header.EventType {
		case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
			replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
			e.Insert = true
		case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
			replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.PARTIAL_UPDATE_ROWS_EVENT:
			e.Rows /= 2 // go-mysql lists the before and the after image of each row
		}
		e.Outbox = v.Table != nil && d.outbox.has(v.Table.Schema, v.Table.Table)
	}
	return e, d.txn != ""
}

package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// ErrNoGTIDs means a Debezium offset has no GTID set: binlog-router
// resumes by GTID only, never by binlog file and position.
var ErrNoGTIDs = errors.New("offset has no gtids")

// DebeziumOffset is a Debezium MySQL or MariaDB connector's source offset,
// the part of it that places the connector in the binlog.
//
// GTIDs is the set of transactions completed before the offset. An offset
// taken inside a transaction (the offset of a record of it: Debezium
// commits the offset of the last record it published, which lies inside
// that record's transaction) has Event and Row: Debezium had handled the
// first Event events of the next transaction, counted from the event that
// begins it (MariaDB: its GTID event; MySQL: its BEGIN query), and the
// first Row rows of the event after those. File and Pos are where that
// transaction begins, or, at a transaction boundary, the position after
// the last transaction.
type DebeziumOffset struct {
	GTIDs string `json:"gtids"`
	File  string `json:"file"`
	Pos   int64  `json:"pos"`
	Event int64  `json:"event,omitempty"`
	Row   int64  `json:"row,omitempty"`
}

// InTransaction reports whether the offset lies inside a transaction.
func (o DebeziumOffset) InTransaction() bool { return o.Event > 0 || o.Row > 0 }

// ParseDebeziumOffset reads a Debezium connector offset as a user copies
// it, one of:
//
//   - the offset value as stored in the Kafka Connect offsets topic, e.g.
//     {"file":"mysql-bin.000003","pos":154,"gtids":"0-1-42","event":2,"row":1};
//   - the key and the value, as `kcat -f '%k %s\n'` prints an offsets
//     topic record, or as a two-element JSON array [key, value];
//   - the body of Kafka Connect's GET /connectors/NAME/offsets,
//     {"offsets":[{"partition":{...},"offset":{...}}]} (with exactly one
//     offset), or one of its elements.
//
// The GTID text is returned as stored (MySQL or MariaDB syntax); an offset
// without it gives an error wrapping ErrNoGTIDs.
func ParseDebeziumOffset(text string) (DebeziumOffset, error) {
	raw, err := offsetValue(text)
	if err != nil {
		return DebeziumOffset{}, err
	}
	var o DebeziumOffset
	if err := json.Unmarshal(raw, &o); err != nil {
		return DebeziumOffset{}, fmt.Errorf("parsing Debezium offset %s: %w; pass the offset value, a JSON object such as {\"file\":\"mysql-bin.000003\",\"pos\":154,\"gtids\":\"...\"}", truncate([]byte(text), 200), err)
	}
	if o.Event < 0 || o.Row < 0 {
		return DebeziumOffset{}, fmt.Errorf("parsing Debezium offset %s: negative event or row", truncate([]byte(text), 200))
	}
	o.GTIDs = strings.Join(strings.Fields(o.GTIDs), "")
	if o.GTIDs == "" {
		where := ""
		if o.File != "" {
			where = fmt.Sprintf(" (it has file %q, pos %d)", o.File, o.Pos)
		}
		return o, fmt.Errorf("parsing Debezium offset: %w%s: binlog-router resumes by GTID only; find the GTID set at that position (MariaDB: SELECT BINLOG_GTID_POS('<file>', <pos>); MySQL: the Previous_gtids event of that file plus the GTIDs in it before that position, from SHOW BINLOG EVENTS IN '<file>') and use --gtid", ErrNoGTIDs, where)
	}
	return o, nil
}

// offsetValue finds the offset value in the shapes ParseDebeziumOffset
// accepts.
func offsetValue(text string) (json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	var docs []json.RawMessage
	for {
		var d json.RawMessage
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parsing Debezium offset %s: %w; pass the offset value, a JSON object such as {\"file\":\"mysql-bin.000003\",\"pos\":154,\"gtids\":\"...\"}", truncate([]byte(text), 200), err)
		}
		docs = append(docs, d)
	}
	switch len(docs) {
	case 0:
		return nil, errors.New("parsing Debezium offset: it is empty; pass the offset value, a JSON object such as {\"file\":\"mysql-bin.000003\",\"pos\":154,\"gtids\":\"...\"}")
	case 1:
	case 2: // key value, as kcat prints a record
		return docs[1], nil
	default:
		return nil, fmt.Errorf("parsing Debezium offset: %d JSON values; pass the offset value, or the key and the value of its record", len(docs))
	}
	raw := docs[0]
	var pair []json.RawMessage
	if err := json.Unmarshal(raw, &pair); err == nil {
		if len(pair) != 2 {
			return nil, fmt.Errorf("parsing Debezium offset: an array must be [key, value], got %d elements", len(pair))
		}
		return pair[1], nil
	}
	var rest struct {
		Offsets []struct {
			Offset json.RawMessage `json:"offset"`
		} `json:"offsets"`
		Offset json.RawMessage `json:"offset"`
	}
	if err := json.Unmarshal(raw, &rest); err == nil {
		switch {
		case rest.Offsets != nil:
			if len(rest.Offsets) != 1 {
				return nil, fmt.Errorf("parsing Debezium offset: the connector has %d offsets; pass the one of its database server", len(rest.Offsets))
			}
			return rest.Offsets[0].Offset, nil
		case rest.Offset != nil && !bytes.Equal(bytes.TrimSpace(rest.Offset), []byte("null")):
			return rest.Offset, nil
		}
	}
	return raw, nil
}

// TxnReader reads the first transaction after a GTID set
// (binlog.Reader.FirstTxn).
type TxnReader interface {
	FirstTxn(ctx context.Context, from *gtid.Set, fn func(binlog.TxnEvent) error) (string, error)
}

// Position is where a router resumes: after Set, and, inside the next
// transaction TxnGTID, after its first TxnRows outbox rows.
type Position struct {
	Set     *gtid.Set
	TxnGTID string
	TxnRows int
}

// DebeziumPosition returns the router position at which Debezium's offset
// o stands, so that the router publishes exactly the outbox rows Debezium
// had not yet published there. An offset at a transaction boundary is its
// GTID set. One inside a transaction needs that transaction: r reads it
// (the first one after the GTID set) and the outbox INSERT rows among the
// events Debezium had handled are counted as Debezium counts events; the
// position is after the whole transaction when they are all of its outbox
// rows, its GTID set when none. The transaction must begin where the
// offset's file and position say, else the offset does not belong to this
// server's binlog and an error says so.
//
// Debezium's count includes every event the server sends a replica. With
// include.query=true Debezium asks MariaDB for its ANNOTATE_ROWS events,
// which the router's replica connection does not receive, and the count
// would not match: the position check then fails, and the fix is --gtid
// with the offset's gtids (the rest of that transaction is published
// again).
func DebeziumPosition(ctx context.Context, r TxnReader, flavor gtid.Flavor, o DebeziumOffset) (Position, error) {
	set, err := gtid.Parse(flavor, o.GTIDs)
	if err != nil {
		return Position{}, fmt.Errorf("the Debezium offset's gtids for a %s server: %w", flavor, err)
	}
	if !o.InTransaction() {
		return Position{Set: set}, nil
	}
	c := debeziumCounter{offset: o}
	txn, err := r.FirstTxn(ctx, set, c.add)
	if err != nil {
		return Position{}, fmt.Errorf("reading the transaction after the Debezium offset's gtids %q: %w", set, err)
	}
	if err := c.check(txn); err != nil {
		return Position{}, err
	}
	switch c.done {
	case 0:
		return Position{Set: set}, nil
	case c.total:
		after := set.Clone()
		if err := after.Add(txn); err != nil {
			return Position{}, err
		}
		return Position{Set: after}, nil
	}
	return Position{Set: set, TxnGTID: txn, TxnRows: c.done}, nil
}

// debeziumCounter follows the events of one transaction as Debezium counts
// them and adds up the outbox INSERT rows before an offset.
type debeziumCounter struct {
	offset DebeziumOffset
	n      int64            // Debezium's index of the current event, 1 at the beginning event
	begin  *binlog.TxnEvent // the event the count starts at
	done   int              // outbox INSERT rows before the offset
	total  int              // outbox INSERT rows of the transaction
}

func (c *debeziumCounter) add(e binlog.TxnEvent) error {
	if e.Kind == binlog.EventGTID || e.Kind == binlog.EventBegin {
		// MariaDB's GTID event begins the transaction; MySQL's BEGIN query
		// after its GTID event starts the count again.
		c.n, c.begin = 0, &e
	}
	c.n++
	if e.Kind != binlog.EventRows || !e.Outbox || !e.Insert {
		return nil
	}
	c.total += e.Rows
	switch {
	case c.n <= c.offset.Event:
		c.done += e.Rows
	case c.n == c.offset.Event+1:
		c.done += min(e.Rows, int(c.offset.Row))
	}
	return nil
}

// check verifies that the transaction read is the one the offset is in.
func (c *debeziumCounter) check(txn string) error {
	o := c.offset
	switch {
	case c.begin == nil:
		return fmt.Errorf("the transaction after the Debezium offset's gtids %q has no beginning event", o.GTIDs)
	case o.File != "" && (c.begin.File != o.File || int64(c.begin.Pos) != o.Pos):
		return fmt.Errorf("the Debezium offset lies inside the transaction at %s:%d, but the first transaction after its gtids %q is %s at %s:%d: the offset does not match this server's binlog (or the connector had include.query=true); use --gtid %q to publish that whole transaction again",
			o.File, o.Pos, o.GTIDs, txn, c.begin.File, c.begin.Pos, o.GTIDs)
	case o.Event >= c.n:
		return fmt.Errorf("the Debezium offset counts %d events into transaction %s, which has %d; the offset does not match this server's binlog; use --gtid %q to publish that whole transaction again",
			o.Event, txn, c.n, o.GTIDs)
	}
	return nil
}

// DebeziumOffsetFor returns the Debezium connector offset at which a
// Debezium MySQL or MariaDB connector resumes exactly where checkpoint cp
// stands: the offset value to store with Kafka Connect's
// PATCH /connectors/NAME/offsets while the connector is stopped. At a
// transaction boundary it is cp's GTID set with its binlog file and
// position. Inside a transaction (TxnGTID) r reads that transaction, the
// first one after the GTID set, and the offset counts the events up to
// its TxnRows-th outbox row as Debezium counts them.
func DebeziumOffsetFor(ctx context.Context, r TxnReader, cp *Checkpoint) (DebeziumOffset, error) {
	o := DebeziumOffset{GTIDs: cp.GTIDSet, File: cp.BinlogFile, Pos: int64(cp.BinlogPos)}
	if cp.TxnGTID == "" || cp.TxnRows == 0 {
		return o, nil
	}
	set, err := gtid.Parse(gtid.Flavor(cp.Flavor), cp.GTIDSet)
	if err != nil {
		return DebeziumOffset{}, fmt.Errorf("checkpoint %q: %w", cp.Name, err)
	}
	var (
		n     int64
		begin binlog.TxnEvent
		rows  int
		found bool
	)
	txn, err := r.FirstTxn(ctx, set, func(e binlog.TxnEvent) error {
		if e.Kind == binlog.EventGTID || e.Kind == binlog.EventBegin {
			n, begin = 0, e
		}
		n++
		if found || e.Kind != binlog.EventRows || !e.Outbox || !e.Insert {
			return nil
		}
		if rows+e.Rows >= cp.TxnRows {
			o.Event, o.Row, found = n-1, int64(cp.TxnRows-rows), true
			return nil
		}
		rows += e.Rows
		return nil
	})
	if err != nil {
		return DebeziumOffset{}, fmt.Errorf("reading transaction %s after checkpoint %q: %w", cp.TxnGTID, cp.GTIDSet, err)
	}
	if txn != cp.TxnGTID {
		return DebeziumOffset{}, fmt.Errorf("checkpoint %q stands inside transaction %s, but the first transaction after %q is %s", cp.Name, cp.TxnGTID, cp.GTIDSet, txn)
	}
	if !found {
		return DebeziumOffset{}, fmt.Errorf("checkpoint %q counts %d outbox rows of transaction %s, which has only %d", cp.Name, cp.TxnRows, txn, rows)
	}
	o.File, o.Pos = begin.File, int64(begin.Pos)
	return o, nil
}

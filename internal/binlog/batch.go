package binlog

import (
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// Batch is what the Reader hands over: the outbox rows and completed
// transactions that accumulated since the previous Batch, in binlog
// order. Under load a Batch holds many transactions; when the receiver
// keeps up, one.
//
// Rows carry their transaction (OutboxRow.Txn). Done lists the
// transactions that ended within the batch, in order, including those
// without outbox rows, so that the receiver's GTID set advances over every
// transaction: after the rows are published, Txn.AddTo for each of Done
// moves a GTID set past them. Open reports that the batch ends inside a
// transaction whose remaining rows follow in later batches: a GTID set
// must not move past it until it is done. A checkpoint inside it names it
// and how many of its rows were published instead (Reader.RunResume takes
// that position back).
type Batch struct {
	Rows      []OutboxRow
	Done      []*Txn
	Open      bool
	Pos       Position // binlog file and end position of the last event in the batch (informational)
	Heartbeat bool     // the source was idle and caught up when the batch was taken
	Bytes     int      // approximate memory held by Rows
}

// Empty reports whether the batch carries nothing.
func (b *Batch) Empty() bool { return len(b.Rows) == 0 && len(b.Done) == 0 && !b.Heartbeat }

// Position is a binlog file name and byte offset, for information only:
// resuming is always by GTID.
type Position struct {
	File string
	Pos  uint32
}

// gtidID is the structured form of a transaction's GTID.
type gtidID struct {
	flavor gtid.Flavor
	sid    [16]byte
	tag    string
	gno    int64
	domain uint32
	server uint32
	seq    uint64
}

// AddTo adds the transaction's GTID to set, which must be of the same
// flavour; an anonymous transaction (MySQL with gtid_mode OFF) adds
// nothing. It is cheap for the common case of consecutive transactions.
func (t *Txn) AddTo(set *gtid.Set) {
	switch t.id.flavor {
	case gtid.MariaDB:
		set.AddMariaDB(t.id.domain, t.id.server, t.id.seq)
	case gtid.MySQL:
		set.AddMySQL(t.id.sid, t.id.tag, t.id.gno)
	}
}

// NewTxn returns the Txn of the transaction with GTID id (server syntax of
// flavor; "" for an anonymous transaction) committed at commit, for a
// source other than the Reader: a test's, or a tool's. Its AddTo adds id as
// the Reader's Txn of the same transaction would.
func NewTxn(flavor gtid.Flavor, id string, commit time.Time) (*Txn, error) {
	t := &Txn{GTID: id, Time: commit}
	if id == "" {
		return t, nil
	}
	t.id.flavor = flavor
	var err error
	switch flavor {
	case gtid.MariaDB:
		t.id.domain, t.id.server, t.id.seq, err = gtid.ParseMariaDBGTID(id)
	case gtid.MySQL:
		t.id.sid, t.id.tag, t.id.gno, err = gtid.ParseMySQLGTID(id)
		if err == nil {
			t.GTID = gtid.FormatMySQL(t.id.sid, t.id.tag, t.id.gno) // as the Reader spells it
		}
	default:
		err = fmt.Errorf("transaction %q: unknown GTID flavour %q", id, flavor)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

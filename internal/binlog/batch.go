package binlog

import "github.com/binlog-router/binlog-router/internal/gtid"

// Batch is the unit the Reader delivers: some outbox rows of one binlog
// transaction, in binlog order. A transaction is delivered as one or more
// batches sharing the same *Txn; the last one has End set. Transactions
// without outbox rows are delivered as a single batch with no rows and End
// set, so that the receiver's GTID set advances over every transaction.
//
// A heartbeat batch (Heartbeat set, Txn nil) says the source is connected
// and has nothing newer: the receiver is caught up.
type Batch struct {
	Txn       *Txn
	Rows      []OutboxRow
	End       bool     // the transaction is complete: after it, Txn.AddTo moves a GTID set past it
	Pos       Position // binlog file and end position of the last event in the batch (informational)
	Heartbeat bool
}

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

package pipelinetest

import (
	"testing"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// CheckCommitted checks every Kafka transaction k committed: the records
// so far are src's first rows in binlog order, each once, and the
// checkpoint of each transaction names exactly the position after them.
func CheckCommitted(t testing.TB, src *Source, k *Kafka) {
	t.Helper()
	var rows []Event // the binlog's outbox rows, in order
	for _, e := range src.Events() {
		if e.ID != 0 {
			rows = append(rows, e)
		}
	}
	n := 0
	for i, txn := range k.Txns() {
		for _, id := range txn.IDs {
			if n >= len(rows) || id != EventID(rows[n].ID) {
				t.Fatalf("Kafka transaction %d: record %s is not the binlog's row %d (committed %v)", i, id, n, k.Txns())
			}
			n++
		}
		if txn.Checkpoint == nil {
			t.Fatalf("Kafka transaction %d carries no checkpoint", i)
		}
		if got := covered(t, txn.Checkpoint, rows); got != n {
			t.Errorf("Kafka transaction %d: checkpoint %s (txn %s, %d rows) covers %d rows; %d are committed",
				i, txn.Checkpoint.GTIDSet, txn.Checkpoint.TxnGTID, txn.Checkpoint.TxnRows, got, n)
		}
	}
}

// covered counts the rows before the position cp names.
func covered(t testing.TB, cp *checkpoint.Checkpoint, rows []Event) int {
	t.Helper()
	set, err := gtid.Parse(gtid.MariaDB, cp.GTIDSet)
	if err != nil {
		t.Fatal(err)
	}
	n, inTxn := 0, 0
	for _, r := range rows {
		one := gtid.New(gtid.MariaDB)
		if err := one.Add(r.GTID); err != nil {
			t.Fatal(err)
		}
		switch {
		case set.Contains(one):
			n++
		case r.GTID == cp.TxnGTID && inTxn < cp.TxnRows:
			n++
			inTxn++
		}
	}
	return n
}

// Sizes returns the number of records of each committed transaction.
func Sizes(txns []Txn) []int {
	var out []int
	for _, t := range txns {
		out = append(out, len(t.IDs))
	}
	return out
}

// IDs returns the event ids of rows ns.
func IDs(ns ...int) []string {
	var out []string
	for _, n := range ns {
		out = append(out, EventID(n))
	}
	return out
}

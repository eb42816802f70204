package pipeline

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/route"
)

// TestTimestampGuardMarks: only records failed with INVALID_TIMESTAMP are
// noted (at most limit); a marked row is a row error with its table until
// the committed GTID set covers its transaction.
func TestTimestampGuardMarks(t *testing.T) {
	g := timestampGuard{limit: 2}
	rec := func(id, g string) *kgo.Record {
		return &kgo.Record{Topic: "orders", Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(id)}, {Key: "binlog_gtid", Value: []byte(g)}}}
	}
	g.note(rec("a", "0-1-5"), errors.New("other"))
	g.note(rec("b", "0-1-5"), kerr.InvalidTimestamp)
	g.note(rec("c", "0-1-5"), kerr.InvalidTimestamp)
	g.note(rec("d", "0-1-5"), kerr.InvalidTimestamp)
	if len(g.refused) != 2 || g.refused[0].key != (rowKey{"0-1-5", "b"}) {
		t.Fatalf("refused %+v", g.refused)
	}
	g.marked = map[rowKey]*route.RowError{{"0-1-5", "b"}: {GTID: "0-1-5", EventID: "b", Kind: KindInvalidTimestamp, Err: errors.New("late")}}
	row := &binlog.OutboxRow{Database: "shop", Table: "outbox", EventID: []byte("b")}
	re := g.rowError(row, &binlog.Txn{GTID: "0-1-5"})
	if re == nil || re.Table != "shop.outbox" || re.Kind != KindInvalidTimestamp {
		t.Fatalf("rowError = %+v", re)
	}
	if g.rowError(&binlog.OutboxRow{EventID: []byte("c")}, &binlog.Txn{GTID: "0-1-5"}) != nil {
		t.Error("an unmarked row is a row error")
	}
	set, err := gtid.Parse(gtid.MariaDB, "0-1-4")
	if err != nil {
		t.Fatal(err)
	}
	g.forget(func(x string) bool { return covers(set, x) })
	if len(g.marked) != 1 {
		t.Error("forgot a row the checkpoint does not cover")
	}
	set, _ = gtid.Parse(gtid.MariaDB, "0-1-5")
	g.forget(func(x string) bool { return covers(set, x) })
	if len(g.marked) != 0 {
		t.Error("kept a row the checkpoint covers")
	}
}

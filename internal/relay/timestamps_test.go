package relay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/route"
)

func TestTimestampWindowOutside(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	w := timestampWindow{after: time.Hour, before: unlimited}
	if err := w.outside(now.Add(59*time.Minute), now, "t"); err != nil {
		t.Errorf("59 min ahead: %v", err)
	}
	if err := w.outside(now.Add(-1000*time.Hour), now, "t"); err != nil {
		t.Errorf("long ago with no before limit: %v", err)
	}
	err := w.outside(now.Add(2*time.Hour), now, "orders")
	if err == nil || !strings.Contains(err.Error(), "2h0m0s ahead of now") || !strings.Contains(err.Error(), "message.timestamp.after.max.ms (1h0m0s)") ||
		!strings.Contains(err.Error(), "topic orders") {
		t.Errorf("2 h ahead: %v", err)
	}
	w.before = 24 * time.Hour
	if err := w.outside(now.Add(-25*time.Hour), now, "t"); err == nil || !strings.Contains(err.Error(), "message.timestamp.before.max.ms") {
		t.Errorf("25 h behind: %v", err)
	}
	w.logAppend = true
	if err := w.outside(now.Add(2*time.Hour), now, "t"); err != nil {
		t.Errorf("LogAppendTime: the broker sets the timestamp: %v", err)
	}
}

func TestMillis(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"3600000":             time.Hour,
		"0":                   0,
		"9223372036854775807": unlimited,
		"-1":                  unlimited,
		"x":                   42,
	} {
		if got := millis(in, 42); got != want {
			t.Errorf("millis(%q) = %v, want %v", in, got, want)
		}
	}
}

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

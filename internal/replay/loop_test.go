package replay

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/route"
)

// fakeSink records what it is given and when commits happen.
type fakeSink struct {
	added     []string // event ids
	committed []string // event ids, as of the last commit
}

func (f *fakeSink) add(_ context.Context, rec *kgo.Record) error {
	f.added = append(f.added, string(rec.Headers[0].Value))
	return nil
}
func (f *fakeSink) commit(context.Context) error { f.committed = slices.Clone(f.added); return nil }
func (f *fakeSink) abort()                       { f.added = slices.Clone(f.committed) }
func (f *fakeSink) close()                       {}

func row(t *binlog.Txn, n int) binlog.OutboxRow {
	return binlog.OutboxRow{Database: "app", Table: "outbox", Txn: t,
		EventID:     []byte(fmt.Sprintf("00000000-0000-0000-0000-%012d", n)),
		AggregateID: []byte("a"), EventType: []byte("E"), Payload: []byte(`{}`)}
}

func newTestLoop(t *testing.T, to string, toTime time.Time, commitRecords int) (*loop, *fakeSink) {
	t.Helper()
	b, err := newBounds(gtid.New(gtid.MariaDB), parseOpt(t, gtid.MariaDB, to), time.Time{}, toTime, parse(t, gtid.MariaDB, "0-1-9"))
	if err != nil {
		t.Fatal(err)
	}
	router, err := route.New(route.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	out := &fakeSink{}
	return &loop{cfg: &Config{CommitRecords: commitRecords, Route: route.DefaultConfig()}, bounds: b, router: router,
		out: out, sum: &Summary{}}, out
}

// TestReplayLoopBatches walks batches the way the reader shapes them:
// several transactions per batch, transactions without rows only in Done,
// a transaction split over two batches and read again as a new Txn after a
// reconnect.
func TestReplayLoopBatches(t *testing.T) {
	txn := func(seq int) *binlog.Txn { return &binlog.Txn{GTID: fmt.Sprintf("0-1-%d", seq), Time: t0} }
	t1, t2, t3, t4, t5 := txn(1), txn(2), txn(3), txn(4), txn(5)
	t3again := txn(3)
	l, out := newTestLoop(t, "0-1-4", time.Time{}, 2)
	ctx := context.Background()

	over, err := l.handle(ctx, binlog.Batch{Rows: []binlog.OutboxRow{row(t1, 1), row(t1, 2), row(t3, 3)}, Done: []*binlog.Txn{t1, t2}, Open: true})
	if err != nil || over {
		t.Fatalf("first batch: over %v, %v", over, err)
	}
	if want := []string{id(1), id(2)}; !slices.Equal(out.committed, want) {
		t.Errorf("committed %v after the first batch, want %v (2 records at the end of a transaction)", out.committed, want)
	}
	over, err = l.handle(ctx, binlog.Batch{Rows: []binlog.OutboxRow{row(t3again, 4), row(t4, 5), row(t5, 6)}, Done: []*binlog.Txn{t3again, t4, t5}})
	if err != nil || !over {
		t.Fatalf("second batch: over %v, %v; the range ends with 0-1-4", over, err)
	}
	if err := l.commit(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{id(1), id(2), id(3), id(4), id(5)}; !slices.Equal(out.committed, want) {
		t.Errorf("committed %v, want %v", out.committed, want)
	}
	if l.sum.Records != 5 || l.sum.Transactions != 4 || l.sum.Committed != "0-1-4" {
		t.Errorf("summary %+v", *l.sum)
	}
}

func TestReplayLoopStopsAtToTime(t *testing.T) {
	late := &binlog.Txn{GTID: "0-1-2", Time: t0.Add(time.Hour)}
	early := &binlog.Txn{GTID: "0-1-1", Time: t0}
	l, out := newTestLoop(t, "", t0.Add(time.Minute), 100)
	over, err := l.handle(context.Background(), binlog.Batch{Rows: []binlog.OutboxRow{row(early, 1), row(late, 2)}, Done: []*binlog.Txn{early, late}})
	if err != nil || !over {
		t.Fatalf("over %v, %v", over, err)
	}
	if want := []string{id(1)}; !slices.Equal(out.added, want) {
		t.Errorf("added %v, want %v: nothing of the transaction after --to-time", out.added, want)
	}
	if l.bounds.reason() != reachedToTime || l.bounds.pos.String() != "0-1-1" {
		t.Errorf("reason %q at %q", l.bounds.reason(), l.bounds.pos)
	}
}

func id(n int) string { return fmt.Sprintf("00000000-0000-0000-0000-%012d", n) }

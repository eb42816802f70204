package replay

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// fakeSink records what it is given and when commits happen; it takes
// records of up to limit bytes.
type fakeSink struct {
	limit     int
	produced  []string // event ids (of a dead letter: "dead:" and its id)
	added     []string // those not aborted
	committed []string // event ids, as of the last commit
	sizes     []int    // len(committed) at each commit
	checkpts  int      // commits that were given a checkpoint
}

var _ pipeline.Sink = (*fakeSink)(nil)

func (f *fakeSink) Open(context.Context) (*checkpoint.Checkpoint, error) { return nil, nil }
func (f *fakeSink) Produce(ctx context.Context, rec *kgo.Record) error {
	if err := kafka.FlagLimits(f.limit).Check(ctx, rec); err != nil {
		return err
	}
	id := ""
	for _, h := range rec.Headers {
		if h.Key == "id" {
			id = string(h.Value)
		}
	}
	if rec.Topic == pipeline.DefaultDeadLetterTopic {
		id = "dead:" + id
	}
	f.added = append(f.added, id)
	f.produced = append(f.produced, id)
	return nil
}
func (f *fakeSink) Commit(_ context.Context, cp *checkpoint.Checkpoint) error {
	f.committed = slices.Clone(f.added)
	f.sizes = append(f.sizes, len(f.committed))
	if cp != nil {
		f.checkpts++
	}
	return nil
}
func (f *fakeSink) Abort(context.Context, error) { f.added = slices.Clone(f.committed) }
func (f *fakeSink) Close(context.Context) error  { return nil }

// scriptSource queues what its script queues, then waits for the end of
// its context, as a reader that has caught up.
type scriptSource struct {
	script func(ctx context.Context, q *binlog.Queue) error
}

var _ pipeline.Source = (*scriptSource)(nil)

func (s *scriptSource) Server() *binlog.Server {
	return &binlog.Server{Flavor: gtid.MariaDB, Executed: gtid.New(gtid.MariaDB), Purged: gtid.New(gtid.MariaDB)}
}
func (s *scriptSource) SetLayouts(map[string]schema.TableDef) {}
func (s *scriptSource) SetPrepared([]binlog.PreparedXA)       {}
func (s *scriptSource) RunResume(ctx context.Context, _ *gtid.Set, _ binlog.Resume, q *binlog.Queue) error {
	err := s.script(ctx, q)
	if err == nil {
		<-ctx.Done()
		err = ctx.Err()
	}
	q.Close(err)
	return err
}

// queue returns a script that queues rows and ends of transactions in
// order: a row is a binlog.OutboxRow, an end a *binlog.Txn.
func queue(events ...any) func(context.Context, *binlog.Queue) error {
	return func(ctx context.Context, q *binlog.Queue) error {
		for _, e := range events {
			var err error
			switch e := e.(type) {
			case binlog.OutboxRow:
				err = q.AddRow(ctx, e, len(e.Payload), binlog.Position{})
			case *binlog.Txn:
				err = q.EndTxn(ctx, e, binlog.Position{})
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func row(t *binlog.Txn, n int) binlog.OutboxRow {
	return binlog.OutboxRow{Database: "app", Table: "outbox", Txn: t,
		EventID:     []byte(fmt.Sprintf("00000000-0000-0000-0000-%012d", n)),
		AggregateID: []byte("a"), EventType: []byte("E"), Payload: []byte(`{}`)}
}

// testPass is a replay of the range up to to (or toTime) over the live router's
// loop, into a fakeSink; queueRows bounds the batches the loop takes.
type testPass struct {
	cfg    Config
	bounds *bounds
	sum    Summary
	out    *fakeSink
}

func newTestPass(t *testing.T, to string, toTime time.Time, commitRecords, queueRows int) *testPass {
	t.Helper()
	b, err := newBounds(gtid.New(gtid.MariaDB), parseOpt(t, gtid.MariaDB, to), time.Time{}, toTime, parse(t, gtid.MariaDB, "0-1-9"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{From: gtid.New(gtid.MariaDB), CommitRecords: commitRecords, QueueRows: queueRows, Route: route.DefaultConfig(),
		Kafka: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, TransactionalID: "replay-test"}
	cfg.setDefaults()
	return &testPass{cfg: cfg, bounds: b, out: &fakeSink{limit: 1 << 20}}
}

// run replays what script queues; it fails the test if the pass has not
// ended within a minute.
func (p *testPass) run(t *testing.T, script func(context.Context, *binlog.Queue) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := pass(ctx, &p.cfg, &scriptSource{script: script}, p.out, p.bounds, &p.sum)
	if ctx.Err() != nil {
		t.Fatalf("the pass did not end: %v", err)
	}
	return err
}

// TestReplayLoopBatches walks batches the way the reader shapes them:
// several transactions per batch, transactions without rows only as
// ends, a transaction split over two batches and read again as a new Txn
// after a reconnect. Nothing is committed inside a binlog transaction and
// nothing after the range.
func TestReplayLoopBatches(t *testing.T) {
	txn := func(seq int) *binlog.Txn { return &binlog.Txn{GTID: fmt.Sprintf("0-1-%d", seq), Time: t0} }
	t1, t2, t3, t4, t5 := txn(1), txn(2), txn(3), txn(4), txn(5)
	t3again := txn(3)
	for _, queueRows := range []int{1, 2, 3, 100} {
		t.Run(fmt.Sprintf("batches of %d rows", queueRows), func(t *testing.T) {
			p := newTestPass(t, "0-1-4", time.Time{}, 2, queueRows)
			err := p.run(t, queue(row(t1, 1), row(t1, 2), t1, t2, row(t3, 3), row(t3again, 4), t3again, row(t4, 5), t4, row(t5, 6), t5))
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{id(1), id(2), id(3), id(4), id(5)}; !slices.Equal(p.out.committed, want) {
				t.Errorf("committed %v, want %v", p.out.committed, want)
			}
			if p.out.checkpts != 0 {
				t.Errorf("%d commits were given a checkpoint: a replay writes none", p.out.checkpts)
			}
			if p.sum.Records != 5 || p.sum.Transactions != 4 || p.sum.Committed != "0-1-4" {
				t.Errorf("summary %+v", p.sum)
			}
		})
	}
}

// TestReplayLoopCommitsAtBoundaries: with --commit-records 2, a
// transaction of three rows is committed whole, never split.
func TestReplayLoopCommitsAtBoundaries(t *testing.T) {
	t1, t2 := &binlog.Txn{GTID: "0-1-1", Time: t0}, &binlog.Txn{GTID: "0-1-2", Time: t0}
	p := newTestPass(t, "0-1-2", time.Time{}, 2, 1)
	if err := p.run(t, queue(row(t1, 1), row(t1, 2), row(t1, 3), t1, row(t2, 4), t2)); err != nil {
		t.Fatal(err)
	}
	if want := []string{id(1), id(2), id(3), id(4)}; !slices.Equal(p.out.committed, want) {
		t.Errorf("committed %v, want %v", p.out.committed, want)
	}
	for _, n := range p.out.sizes {
		if n != 0 && n != 3 && n != 4 {
			t.Errorf("commits made %v records visible in all: a transaction was split", p.out.sizes)
			break
		}
	}
}

// TestReplayLoopDeadLetters: a replay given --on-invalid=dead-letter
// diverts a row too large for its topic to the dead-letter topic, as the
// relay does, and goes on.
func TestReplayLoopDeadLetters(t *testing.T) {
	t1 := &binlog.Txn{GTID: "0-1-1", Time: t0}
	big := row(t1, 2)
	big.Payload = []byte(`{"pad":"` + string(slices.Repeat([]byte("x"), 4096)) + `"}`)
	for _, policy := range []pipeline.InvalidPolicy{pipeline.InvalidFail, pipeline.InvalidDeadLetter} {
		t.Run(string(policy), func(t *testing.T) {
			p := newTestPass(t, "0-1-1", time.Time{}, 100, 100)
			p.cfg.OnInvalid = policy
			p.out.limit = 2048
			err := p.run(t, queue(row(t1, 1), big, row(t1, 3), t1))
			if policy == pipeline.InvalidFail {
				if err == nil || len(p.out.committed) != 0 {
					t.Fatalf("err %v, committed %v: the row over the topic's limit stops the replay, nothing of its transaction committed", err, p.out.committed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{id(1), "dead:" + id(2), id(3)}; !slices.Equal(p.out.committed, want) {
				t.Errorf("committed %v, want %v", p.out.committed, want)
			}
		})
	}
}

func TestReplayLoopStopsAtToTime(t *testing.T) {
	late := &binlog.Txn{GTID: "0-1-2", Time: t0.Add(time.Hour)}
	early := &binlog.Txn{GTID: "0-1-1", Time: t0}
	p := newTestPass(t, "", t0.Add(time.Minute), 100, 100)
	if err := p.run(t, queue(row(early, 1), early, row(late, 2), late)); err != nil {
		t.Fatal(err)
	}
	if want := []string{id(1)}; !slices.Equal(p.out.produced, want) {
		t.Errorf("produced %v, want %v: nothing of the transaction after --to-time", p.out.produced, want)
	}
	if p.bounds.reason() != reachedToTime || p.bounds.pos.String() != "0-1-1" || p.sum.Committed != "0-1-1" {
		t.Errorf("reason %q at %q, committed %q", p.bounds.reason(), p.bounds.pos, p.sum.Committed)
	}
}

func id(n int) string { return fmt.Sprintf("00000000-0000-0000-0000-%012d", n) }

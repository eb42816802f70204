package test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
	"github.com/binlog-router/binlog-router/test/harness"
)

// ledgerInbox is a billing database whose inbox consumer appends each Paid
// event's amount to a ledger without a unique key, so an event applied
// twice shows as two rows.
type ledgerInbox struct {
	db   *sql.DB
	name string // consumer name
}

func newLedgerInbox(t *testing.T, e *harness.Env) *ledgerInbox {
	t.Helper()
	l := &ledgerInbox{db: devenv.CreateDatabase(t, e.Maria, "billing"), name: inboxtest.Unique("billing")}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := inbox.CreateTable(ctx, l.db, inbox.MySQL, ""); err != nil {
		t.Fatal(err)
	}
	inboxtest.MustExec(t, l.db, "CREATE TABLE ledger (event_id CHAR(36) NOT NULL, account VARCHAR(64) NOT NULL, amount INT NOT NULL)")
	return l
}

func (l *ledgerInbox) start(t *testing.T, e *harness.Env, group string) *inboxtest.Running {
	t.Helper()
	return inboxtest.Start(t, inbox.Config{
		Brokers: e.Kafka.Brokers, Topics: []string{e.Prefix + ".Paid"}, ConsumerName: l.name, Group: group,
		DB: l.db, Dialect: inbox.MySQL, CommitInterval: 50 * time.Millisecond,
		Handler: func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
			var p struct{ Amount int }
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO ledger (event_id, account, amount) VALUES (?, ?, ?)", ev.ID, ev.AggregateID, p.Amount)
			return err
		},
	})
}

// check compares the ledger with the events written: n rows, one per
// event, summing to want.
func (l *ledgerInbox) check(t *testing.T, n, want int) {
	t.Helper()
	var rows, distinct, sum int
	if err := l.db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT event_id), COALESCE(SUM(amount), 0) FROM ledger").Scan(&rows, &distinct, &sum); err != nil {
		t.Fatal(err)
	}
	if rows != n || distinct != n || sum != want {
		t.Errorf("ledger %d rows, %d distinct, sum %d; want %d, %d, %d", rows, distinct, sum, n, n, want)
	}
}

// writePaid commits n Paid events, four per transaction, with amounts
// from..from+n-1, and returns their sum.
func writePaid(e *harness.Env, from, n int) int {
	sum := 0
	for i := from; i < from+n; i += 4 {
		var evs []harness.Event
		for j := i; j < min(i+4, from+n); j++ {
			evs = append(evs, harness.NewEvent(fmt.Sprintf("acct-%d", j%7), "Paid", fmt.Sprintf(`{"amount":%d}`, j)))
			sum += j
		}
		e.InsertTx(evs...)
	}
	return sum
}

// TestInboxBehindRouter runs the router binary on an outbox table and an
// inbox consumer on its topic: the ledger ends with each event's effect
// once, and a second pass over the topic from offset zero under the same
// consumer name changes nothing.
func TestInboxBehindRouter(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	l := newLedgerInbox(t, e)
	harness.StartRouter(t, e.Args("inbox-e2e")...)
	const n = 120
	want := writePaid(e, 0, n)
	pass := func(group string, done func(inbox.Stats) bool) inbox.Stats {
		c := l.start(t, e, group)
		harness.Eventually(t, 90*time.Second, "the consumer to handle every event", func() bool { return done(c.Stats()) })
		if err := c.Stop(t); err != nil {
			t.Fatal(err)
		}
		return c.Stats()
	}
	st := pass(inboxtest.Unique("billing"), func(s inbox.Stats) bool { return s.Processed >= n })
	t.Logf("first pass %+v", st)
	st2 := pass(inboxtest.Unique("billing-again"), func(s inbox.Stats) bool { return s.Duplicates >= n })
	t.Logf("second pass %+v", st2)
	if st.Processed != n || st.Duplicates != 0 || st2.Processed != 0 || st2.Duplicates != n {
		t.Errorf("stats %+v then %+v: want %d processed, then %d duplicates", st, st2, n, n)
	}
	l.check(t, n, want)
}

// TestInboxBehindRouterReplay: after the consumer applied the router's
// events, `binlog-router replay` publishes the same range again to the
// original topics (same ids); the running consumer skips every replayed
// record as a duplicate and the ledger is unchanged.
func TestInboxBehindRouterReplay(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	l := newLedgerInbox(t, e)
	args := e.Args("inbox-replay")
	harness.StartRouter(t, args...)
	from := e.GTIDPos()
	const n = 60
	want := writePaid(e, 0, n)
	to := e.GTIDPos()
	c := l.start(t, e, inboxtest.Unique("billing"))
	harness.Eventually(t, 90*time.Second, "the router's events applied", func() bool { return c.Stats().Processed >= n })

	res := harness.RunCLI(t, append(append([]string{"replay"}, args...), "--from-gtid", from, "--to-gtid", to)...)
	if res.Code != 0 {
		t.Fatalf("replay exit %d: %s", res.Code, res.Stderr)
	}
	harness.Eventually(t, 90*time.Second, "the replayed records skipped", func() bool { return c.Stats().Duplicates >= n })
	if err := c.Stop(t); err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	t.Logf("replayed %d events: %+v", n, st)
	if st.Processed != n || st.Duplicates != n || st.DeadLetters != 0 {
		t.Errorf("stats %+v: want %d processed and %d duplicates", st, n, n)
	}
	if got := len(harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(e.Prefix+".Paid")).Read(2*n, 30*time.Second)); got != 2*n {
		t.Errorf("the topic holds %d records, want %d (each event twice)", got, 2*n)
	}
	l.check(t, n, want)
}

// TestInboxBehindRouterAtLeastOnce: the router runs with --delivery
// at-least-once and is SIGKILLed while it publishes a large transaction,
// before its checkpoint covers it, so that its restart publishes those
// records again. The inbox consumer skips exactly the repeated records:
// its duplicates equal the topic's records minus its distinct event ids,
// and the ledger holds each event once.
func TestInboxBehindRouterAtLeastOnce(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	l := newLedgerInbox(t, e)
	// Checkpoints only at the ends of binlog transactions.
	r := harness.StartRouter(t, e.Args("inbox-alo", "--delivery", "at-least-once", "--commit-interval", "1m")...)
	c := l.start(t, e, inboxtest.Unique("billing"))
	topic := e.Prefix + ".Paid"
	n, want := 0, 0
	const big = 1500
	kills := 0
	for round := 0; round < 10; round++ {
		before := sumOffsets(inboxtest.EndOffsets(t, e.Kafka.Brokers, topic))
		want += writePaidTx(e, n, big)
		n += big
		txn := harness.GTIDSeqs(t, e.GTIDPos())[0] // the consumer's own transactions come later
		harness.Eventually(t, 60*time.Second, "the router to publish part of the transaction", func() bool {
			return sumOffsets(inboxtest.EndOffsets(t, e.Kafka.Brokers, topic)) > before
		})
		r.Kill()
		kills++
		r.Restart()
		// Once the checkpoint covers the transaction, all of it is published.
		harness.Eventually(t, 120*time.Second, "the restarted router to publish the transaction", func() bool {
			return harness.GTIDSeqs(t, e.CheckpointSet("inbox-alo"))[0] >= txn
		})
		if sumOffsets(inboxtest.EndOffsets(t, e.Kafka.Brokers, topic)) > int64(n) {
			break // records were published twice
		}
	}
	total := sumOffsets(inboxtest.EndOffsets(t, e.Kafka.Brokers, topic))
	harness.Eventually(t, 120*time.Second, "every record handled", func() bool {
		s := c.Stats()
		return s.Processed+s.Duplicates >= total
	})
	if err := c.Stop(t); err != nil {
		t.Fatal(err)
	}
	recs := harness.NewConsumer(t, e.Kafka.Brokers, harness.ExactTopic(topic)).Read(int(total), 30*time.Second)
	ids := map[string]bool{}
	for _, rec := range recs {
		ids[harness.RecordHeader(rec, "id")] = true
	}
	repeated := int64(len(recs) - len(ids))
	st := c.Stats()
	t.Logf("%d events, %d kills: the topic holds %d records (%d repeated); inbox %+v", n, kills, len(recs), repeated, st)
	if repeated == 0 {
		t.Fatalf("no kill landed before the checkpoint covered the transaction: no record was published twice, the test proved nothing")
	}
	if len(ids) != n || st.Processed != int64(n) || st.Duplicates != repeated {
		t.Errorf("%d distinct ids, stats %+v: want %d processed and %d duplicates", len(ids), st, n, repeated)
	}
	l.check(t, n, want)
}

// writePaidTx commits n Paid events in one transaction and returns the sum
// of their amounts.
func writePaidTx(e *harness.Env, from, n int) int {
	sum := 0
	var evs []harness.Event
	for j := from; j < from+n; j++ {
		evs = append(evs, harness.NewEvent(fmt.Sprintf("acct-%d", j%7), "Paid", fmt.Sprintf(`{"amount":%d}`, j)))
		sum += j
	}
	e.InsertTx(evs...)
	return sum
}

func sumOffsets(m map[int32]int64) int64 {
	var s int64
	for _, o := range m {
		s += o
	}
	return s
}

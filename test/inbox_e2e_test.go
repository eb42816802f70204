package test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestInboxBehindRouter runs the router binary on an outbox table and an
// inbox consumer on its topic: a ledger table (no unique key) ends with
// each event's effect once, and a second pass over the topic from offset
// zero under the same consumer name changes nothing.
func TestInboxBehindRouter(t *testing.T) {
	e := newEnv(t, envOpts{})
	billing := devenv.CreateDatabase(t, e.maria, "billing")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := inbox.CreateTable(ctx, billing, inbox.MySQL, ""); err != nil {
		t.Fatal(err)
	}
	mustExec(t, billing, "CREATE TABLE ledger (event_id CHAR(36) NOT NULL, account VARCHAR(64) NOT NULL, amount INT NOT NULL)")
	startRouter(t, e.args("inbox-e2e")...)

	const n = 120
	want := 0
	for i := 0; i < n; i += 4 {
		var evs []event
		for j := i; j < i+4; j++ {
			evs = append(evs, newEvent(fmt.Sprintf("acct-%d", j%7), "Paid", fmt.Sprintf(`{"amount":%d}`, j)))
			want += j
		}
		e.insertTx(evs...)
	}
	handler := func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
		var p struct{ Amount int }
		if err := jsonUnmarshal(ev.Payload, &p); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO ledger (event_id, account, amount) VALUES (?, ?, ?)", ev.ID, ev.AggregateID, p.Amount)
		return err
	}
	pass := func(group string, done func(inbox.Stats) bool) inbox.Stats {
		c, err := inbox.New(inbox.Config{
			Brokers: e.kafka.Brokers, Topics: []string{e.prefix + ".Paid"}, ConsumerName: "billing", Group: group,
			DB: billing, Dialect: inbox.MySQL, Handler: handler, CommitInterval: 50 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { errc <- c.Run(rctx) }()
		eventually(t, 90*time.Second, "the consumer to handle every event", func() bool { return done(c.Stats()) })
		stop()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		return c.Stats()
	}
	st := pass("billing", func(s inbox.Stats) bool { return s.Processed >= n })
	t.Logf("first pass %+v", st)
	st2 := pass("billing-again", func(s inbox.Stats) bool { return s.Duplicates >= n })
	t.Logf("second pass %+v", st2)
	var rows, distinct, sum int
	if err := billing.QueryRow("SELECT COUNT(*), COUNT(DISTINCT event_id), COALESCE(SUM(amount), 0) FROM ledger").Scan(&rows, &distinct, &sum); err != nil {
		t.Fatal(err)
	}
	if st.Processed != n || st.Duplicates != 0 || st2.Processed != 0 || st2.Duplicates != n || rows != n || distinct != n || sum != want {
		t.Errorf("ledger %d rows, %d distinct, sum %d (want %d, %d, %d); stats %+v then %+v", rows, distinct, sum, n, n, want, st, st2)
	}
}

package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
)

// inboxTimeout bounds each inbox pass.
const inboxTimeout = 30 * time.Second

// demoInbox runs an inbox consumer over the demo's topics: it applies each
// committed event to the order_history table once, then a second pass from
// offset zero (a forced redelivery) skips every event as a duplicate, and
// the inbox rows are pruned.
func demoInbox(ctx context.Context, brokers []string, db *sql.DB, w written) error {
	if err := inbox.CreateTable(ctx, db, inbox.MySQL, ""); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE order_history (
  event_id CHAR(36) NOT NULL, order_id VARCHAR(64) NOT NULL, event_type VARCHAR(64) NOT NULL)`); err != nil {
		return fmt.Errorf("creating order_history: %w", err)
	}
	want := int64(len(w.committed))
	pass := func(group string, done func(inbox.Stats) bool) (inbox.Stats, error) {
		c, err := inbox.New(inbox.Config{
			Brokers: brokers, Topics: []string{topicRegex}, ConsumerName: "order-history", Group: group,
			DB: db, Dialect: inbox.MySQL, CommitInterval: 50 * time.Millisecond,
			KafkaOptions: []kgo.Opt{kgo.ConsumeRegex()},
			Handler: func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
				_, err := tx.ExecContext(ctx, "INSERT INTO order_history (event_id, order_id, event_type) VALUES (?, ?, ?)",
					ev.ID, ev.AggregateID, ev.Type)
				return err
			},
		})
		if err != nil {
			return inbox.Stats{}, err
		}
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		errc := make(chan error, 1)
		go func() { errc <- c.Run(rctx) }()
		deadline := time.Now().Add(inboxTimeout)
		for !done(c.Stats()) {
			if time.Now().After(deadline) {
				stop()
				<-errc
				return c.Stats(), fmt.Errorf("inbox consumer %s: %+v after %s, want %d events", group, c.Stats(), inboxTimeout, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		return c.Stats(), <-errc
	}
	st, err := pass("order-history", func(s inbox.Stats) bool { return s.Processed >= want })
	if err != nil {
		return err
	}
	out.ok("inbox consumer applied %d events to order_history (%d duplicates)", st.Processed, st.Duplicates)
	st, err = pass("order-history-redelivery", func(s inbox.Stats) bool { return s.Duplicates >= want })
	if err != nil {
		return err
	}
	out.ok("forced redelivery from offset 0: %d applied, %d skipped as duplicates", st.Processed, st.Duplicates)
	var rows, distinct int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT event_id) FROM order_history").Scan(&rows, &distinct); err != nil {
		return err
	}
	if rows != want || distinct != want || st.Processed != 0 {
		return fmt.Errorf("order_history has %d rows (%d distinct) after the redelivery, want %d", rows, distinct, want)
	}
	out.ok("order_history: %d rows, one per event", rows)
	// Pruning needs only the database; in production keep rows longer than
	// any redelivery or replay reaches back (days, not seconds).
	pruned, err := inbox.Pruner{DB: db, Dialect: inbox.MySQL, ConsumerName: "order-history"}.Prune(ctx, 0, 100)
	if err != nil {
		return err
	}
	out.ok("inbox.Pruner deleted the consumer's %d inbox rows in batches of 100", pruned)
	return nil
}

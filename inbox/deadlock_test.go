package inbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// TestInboxHandlerDeadlockRetried makes two handlers, on two partitions,
// lock two rows in opposite orders: the database kills one transaction as
// a deadlock (InnoDB 1213, PostgreSQL 40P01); the consumer retries it and
// both events are applied once, none taken for a duplicate. Partitions are
// handled independently, so both handlers hold their first row together
// however the records were fetched: the deadlock forms every run.
func TestInboxHandlerDeadlockRetried(t *testing.T) {
	for _, d := range inboxtest.Databases() {
		t.Run(d.Name, func(t *testing.T) {
			db := d.OpenInbox(t)
			inboxtest.MustExec(t, db, "CREATE TABLE accounts (id INT NOT NULL PRIMARY KEY, balance INT NOT NULL)")
			inboxtest.MustExec(t, db, "INSERT INTO accounts VALUES (1, 0), (2, 0)")
			k := newKafka(t)
			topic := unique("inbox.deadlock")
			produceToPartitions(t, k, []*kgo.Record{
				{Topic: topic, Partition: 0, Key: []byte("a"), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte("first-1")}}},
				{Topic: topic, Partition: 1, Key: []byte("b"), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte("first-2")}}},
			})
			var deadlocks atomic.Int64
			var barrier sync.WaitGroup
			barrier.Add(2)
			var firstAttempt sync.Map
			var apart atomic.Bool // a handler waited in vain for the other
			handler := func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
				first, second := 1, 2
				if ev.ID == "first-2" {
					first, second = 2, 1
				}
				upd := fmt.Sprintf("UPDATE accounts SET balance = balance + 1 WHERE id = %s", d.PH(1))
				if _, err := tx.ExecContext(ctx, upd, first); err != nil {
					return err
				}
				if _, loaded := firstAttempt.LoadOrStore(ev.ID, true); !loaded {
					barrier.Done()
					both := make(chan struct{})
					go func() { barrier.Wait(); close(both) }()
					select { // both hold their first row: the second UPDATEs deadlock
					case <-both:
					case <-time.After(30 * time.Second):
						apart.Store(true)
					}
				}
				_, err := tx.ExecContext(ctx, upd, second)
				if isDeadlock(err) {
					deadlocks.Add(1)
				}
				return err
			}
			c := inboxtest.Start(t, inbox.Config{
				Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: unique("transfers"),
				DB: db, Dialect: d.Dialect, Handler: handler, Workers: 2,
				MaxAttempts: 5, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
			})
			eventually(t, 60*time.Second, "both events applied", func() bool { return c.Stats().Processed == 2 })
			if err := c.Stop(t); err != nil {
				t.Fatal(err)
			}
			st := c.Stats()
			t.Logf("stats %+v, deadlocks %d", st, deadlocks.Load())
			if apart.Load() {
				t.Errorf("a handler waited 30s for the other partition's handler: the partitions were not handled concurrently")
			}
			if deadlocks.Load() != 1 || st.Retries != 1 || st.Duplicates != 0 || st.DeadLetters != 0 {
				t.Errorf("deadlocks %d, stats %+v: want one deadlock, retried once, no duplicate or dead letter", deadlocks.Load(), st)
			}
			var b1, b2 int
			if err := db.QueryRow("SELECT (SELECT balance FROM accounts WHERE id = 1), (SELECT balance FROM accounts WHERE id = 2)").Scan(&b1, &b2); err != nil {
				t.Fatal(err)
			}
			if b1 != 2 || b2 != 2 {
				t.Errorf("balances %d, %d; want 2, 2 (each event applied once)", b1, b2)
			}
		})
	}
}

func isDeadlock(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1213
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "40P01"
}

package inbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// TestInboxAppliesOnceAndDeadLetters: duplicates on purpose (a duplicated
// record, a redelivery from offset zero), a unique-key violation in the
// business table (an error, dead-lettered, not a duplicate) and a handler
// that always fails (dead-lettered, with the original topic, partition,
// offset, attempts, error and consumer in its headers), on both databases;
// then Pruner deletes the rows, without a consumer.
func TestInboxAppliesOnceAndDeadLetters(t *testing.T) {
	for _, d := range inboxtest.Databases() {
		t.Run(d.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			db := d.OpenInbox(t)
			inboxtest.MustExec(t, db, "CREATE TABLE payments (event_id VARCHAR(64) NOT NULL PRIMARY KEY, ref VARCHAR(64) NOT NULL UNIQUE, amount INT NOT NULL)")
			k := newKafka(t)
			topic, name := unique("inbox.PaymentMade"), unique("payments")

			const n = 20
			var recs []*kgo.Record
			for i := range n {
				recs = append(recs, paymentRecord(topic, fmt.Sprintf("ev-%02d", i), fmt.Sprintf("ref-%02d", i), "PaymentMade"))
			}
			recs = append(recs,
				paymentRecord(topic, "ev-05", "ref-05", "PaymentMade"),    // a duplicated record
				paymentRecord(topic, "ev-clash", "ref-07", "PaymentMade"), // unique violation on ref
				paymentRecord(topic, "ev-poison", "ref-x", "Poison"),      // always fails
			)
			inboxtest.ProduceRecords(t, k.Brokers, recs)

			handler := func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
				if ev.Type == "Poison" {
					return errors.New("poison event")
				}
				ref, _ := ev.Header("ref")
				_, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO payments (event_id, ref, amount) VALUES (%s, %s, %s)", d.PH(1), d.PH(2), d.PH(3)), ev.ID, ref, 1)
				return err
			}
			run := func(group string, wantDone func(inbox.Stats) bool) inbox.Stats {
				c := inboxtest.Start(t, inbox.Config{
					Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: name, Group: group,
					DB: db, Dialect: d.Dialect, Handler: handler,
					MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
					CommitInterval: 50 * time.Millisecond,
				})
				eventually(t, 60*time.Second, "the consumer to handle every record", func() bool { return wantDone(c.Stats()) })
				if err := c.Stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
				return c.Stats()
			}
			st := run(name, func(s inbox.Stats) bool { return s.Processed+s.Duplicates+s.DeadLetters >= n+3 })
			t.Logf("first run: %+v", st)
			if st.Processed != n || st.Duplicates != 1 || st.DeadLetters != 2 || st.Retries != 4 {
				t.Errorf("stats %+v, want processed %d, duplicates 1, dead letters 2, retries 4", st, n)
			}
			checkPayments(t, db, n)
			if got := committedTotal(t, k.Brokers, name, topic); got != n+3 {
				t.Errorf("committed offsets of group %s sum to %d, want %d (every record)", name, got, n+3)
			}

			dls := readRecords(t, k.Brokers, name+".dead-letter", 2, 30*time.Second)
			partitionOf := map[string]int32{}
			for _, r := range recordsOf(t, k.Brokers, topic, n+3) {
				partitionOf[recordHeader(r, "id")] = r.Partition
			}
			got := map[string]string{}
			for _, r := range dls {
				id, errText := recordHeader(r, "id"), recordHeader(r, inbox.HeaderError)
				got[id] = errText
				if recordHeader(r, inbox.HeaderOriginalTopic) != topic || recordHeader(r, inbox.HeaderAttempts) != "3" ||
					recordHeader(r, inbox.HeaderOriginalOffset) == "" || recordHeader(r, inbox.HeaderConsumer) != name ||
					recordHeader(r, inbox.HeaderOriginalPartition) != fmt.Sprint(partitionOf[id]) ||
					string(r.Key) != "acct-1" || recordHeader(r, "ref") == "" {
					t.Errorf("dead letter %s: key %q, headers %v (original partition %d)", id, r.Key, r.Headers, partitionOf[id])
				}
			}
			if !strings.Contains(got["ev-poison"], "poison event") || got["ev-clash"] == "" {
				t.Errorf("dead letters %v, want ev-poison and ev-clash with their errors", got)
			}

			// At-least-once style redelivery: another group reads from offset
			// zero under the same consumer name; everything is a duplicate
			// except the two failed events, which are dead-lettered again.
			st = run(unique("payments-replay"), func(s inbox.Stats) bool { return s.Duplicates+s.DeadLetters >= n+3 })
			t.Logf("redelivery: %+v", st)
			if st.Processed != 0 || st.Duplicates != n+1 {
				t.Errorf("redelivery stats %+v, want 0 processed and %d duplicates", st, n+1)
			}
			checkPayments(t, db, n)
			var rows int
			if err := db.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM inbox WHERE consumer_name = %s", d.PH(1)), name).Scan(&rows); err != nil || rows != n {
				t.Errorf("inbox rows %d (%v), want %d", rows, err, n)
			}

			// Prune needs only the database: no consumer joins the group.
			pr := inbox.Pruner{DB: db, Dialect: d.Dialect, ConsumerName: name}
			if kept, err := pr.Prune(ctx, time.Hour, 7); err != nil || kept != 0 {
				t.Errorf("Prune(1h) deleted %d rows (%v), want 0", kept, err)
			}
			if pruned, err := (inbox.Pruner{DB: db, Dialect: d.Dialect, ConsumerName: "someone-else"}).Prune(ctx, 0, 7); err != nil || pruned != 0 {
				t.Errorf("Prune of another consumer deleted %d rows (%v), want 0", pruned, err)
			}
			if pruned, err := pr.Prune(ctx, 0, 7); err != nil || pruned != n {
				t.Errorf("Prune(0) deleted %d rows (%v), want %d", pruned, err, n)
			}
		})
	}
}

func paymentRecord(topic, id, ref, typ string) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte("acct-1"), Value: []byte(`{"amount":1}`), Headers: []kgo.RecordHeader{
		{Key: "id", Value: []byte(id)}, {Key: "event_type", Value: []byte(typ)},
		{Key: "aggregate_type", Value: []byte("account")}, {Key: "ref", Value: []byte(ref)},
	}}
}

func checkPayments(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	var count, distinct int
	if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT event_id) FROM payments").Scan(&count, &distinct); err != nil {
		t.Fatal(err)
	}
	if count != n || distinct != n {
		t.Errorf("payments: %d rows, %d distinct, want %d", count, distinct, n)
	}
}

package inbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// TestInboxPoisonDoesNotBlockOtherPartitions: a record that keeps failing
// in partition 0 is retried with backoff while partition 1's records are
// all applied, with a single worker (a partition waiting for its retry
// holds none); partition 0 keeps its order: nothing after the failing
// record is applied before it. Once the record succeeds, the rest of
// partition 0 follows.
func TestInboxPoisonDoesNotBlockOtherPartitions(t *testing.T) {
	d := inboxtest.MariaDB()
	db := d.OpenInbox(t)
	inboxtest.MustExec(t, db, "CREATE TABLE effects (seq BIGINT AUTO_INCREMENT PRIMARY KEY, event_id VARCHAR(64) NOT NULL, part INT NOT NULL)")
	k := newKafka(t)
	topic := unique("inbox.poison")
	rec := func(p int32, id string) *kgo.Record {
		return &kgo.Record{Topic: topic, Partition: p, Key: []byte(id), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(id)}}}
	}
	recs := []*kgo.Record{rec(0, "p0-0"), rec(0, "poison")}
	for i := 1; i <= 5; i++ {
		recs = append(recs, rec(0, fmt.Sprintf("p0-%d", i)))
	}
	const p1 = 60
	for i := range p1 {
		recs = append(recs, rec(1, fmt.Sprintf("p1-%02d", i)))
	}
	produceToPartitions(t, k, recs)

	var healed atomic.Bool
	handler := func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
		if ev.ID == "poison" && !healed.Load() {
			return errors.New("poison: not yet")
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO effects (event_id, part) VALUES (?, ?)", ev.ID, ev.Partition)
		return err
	}
	c := inboxtest.Start(t, inbox.Config{
		Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: unique("poisoned"),
		DB: db, Dialect: d.Dialect, Handler: handler, Workers: 1,
		MaxAttempts: 1000, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 400 * time.Millisecond,
		// Small polls and backlogs: partition 0 is paused while it retries,
		// partition 1 is paused and resumed as its backlog fills and drains.
		MaxPollRecords: 5, PartitionBacklog: 10, CommitInterval: 50 * time.Millisecond,
	})
	count := func(q string) int {
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	eventually(t, 60*time.Second, "partition 1 applied while partition 0 retries", func() bool {
		return count("SELECT COUNT(*) FROM effects WHERE part = 1") == p1
	})
	retries := c.Stats().Retries
	if retries < 1 {
		t.Fatalf("partition 1 done before the poison record failed once: the test proved nothing")
	}
	// Partition 0 is still retrying: more retries come, and nothing after
	// the poison record was applied.
	eventually(t, 30*time.Second, "partition 0 still retrying", func() bool { return c.Stats().Retries >= retries+2 })
	if got := count("SELECT COUNT(*) FROM effects WHERE part = 0"); got != 1 {
		t.Fatalf("partition 0 has %d effects while its second record fails, want 1 (p0-0 only)", got)
	}
	t.Logf("partition 1's %d records applied while partition 0 retried %d times", p1, c.Stats().Retries)

	healed.Store(true)
	eventually(t, 60*time.Second, "partition 0 applied after the poison record succeeds", func() bool {
		return count("SELECT COUNT(*) FROM effects WHERE part = 0") == 7
	})
	order := func(part int) []string {
		rows, err := db.Query("SELECT event_id FROM effects WHERE part = ? ORDER BY seq", part)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	if got, want := fmt.Sprint(order(0)), "[p0-0 poison p0-1 p0-2 p0-3 p0-4 p0-5]"; got != want {
		t.Errorf("partition 0 applied in order %s, want %s", got, want)
	}
	for i, id := range order(1) {
		if want := fmt.Sprintf("p1-%02d", i); id != want {
			t.Errorf("partition 1's effect %d is %s, want %s (offset order)", i, id, want)
			break
		}
	}
	if err := c.Stop(t); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Processed != p1+7 || st.Duplicates != 0 || st.DeadLetters != 0 {
		t.Errorf("stats %+v, want %d processed, no duplicate or dead letter", st, p1+7)
	}
}

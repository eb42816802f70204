package inbox_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// TestInboxGroupHandoff: while records keep coming, a second consumer
// joins the group and the cooperative-sticky rebalance moves partitions
// to it (the first drains and commits them at revocation); then the first
// leaves and the second takes everything over. Graceful hand-overs
// redeliver nothing: no duplicate at all, and every event's side effect
// exactly once, on both databases.
func TestInboxGroupHandoff(t *testing.T) {
	for _, d := range inboxtest.Databases() {
		t.Run(d.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			db := d.OpenInbox(t)
			inboxtest.MustExec(t, db, "CREATE TABLE effects (event_id VARCHAR(64) NOT NULL, member VARCHAR(8) NOT NULL)")
			k := newKafka(t)
			topic, name := unique("inbox.handoff"), unique("handoff")
			inboxtest.ProduceRecords(t, k.Brokers, []*kgo.Record{{Topic: topic, Key: []byte("k"), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte("ev-first")}}}})

			// The producer keeps writing batches until stopped.
			var produced atomic.Int64
			produced.Store(1)
			stopProducing := make(chan struct{})
			var producing sync.WaitGroup
			producing.Add(1)
			go func() {
				defer producing.Done()
				cl, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...))
				if err != nil {
					t.Error(err)
					return
				}
				defer cl.Close()
				for {
					select {
					case <-stopProducing:
						return
					case <-time.After(20 * time.Millisecond):
					}
					var recs []*kgo.Record
					for range 10 {
						id := fmt.Sprintf("ev-%06d", produced.Add(1))
						recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(id), Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(id)}}})
					}
					if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
						t.Errorf("producing: %v", err)
						return
					}
				}
			}()

			type member struct {
				*inboxtest.Running
				assigned, revoked atomic.Int64 // partitions
			}
			start := func(label string) *member {
				m := &member{}
				ins := fmt.Sprintf("INSERT INTO effects (event_id, member) VALUES (%s, %s)", d.PH(1), d.PH(2))
				m.Running = inboxtest.Start(t, inbox.Config{
					Brokers: k.Brokers, Topics: []string{topic}, ConsumerName: name,
					DB: db, Dialect: d.Dialect, CommitInterval: 200 * time.Millisecond,
					Handler: func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
						if _, err := tx.ExecContext(ctx, ins, ev.ID, label); err != nil {
							return err
						}
						select { // some work in flight at every rebalance
						case <-time.After(3 * time.Millisecond):
							return nil
						case <-ctx.Done():
							return ctx.Err()
						}
					},
					Hooks: inbox.Hooks{
						OnAssigned: func(a map[string][]int32) { m.assigned.Add(int64(len(a[topic]))) },
						OnRevoked:  func(r map[string][]int32) { m.revoked.Add(int64(len(r[topic]))) },
					},
				})
				return m
			}
			a := start("a")
			eventually(t, 60*time.Second, "a applies events", func() bool { return a.Stats().Processed >= 100 })
			b := start("b")
			eventually(t, 90*time.Second, "a partition moved from a to b, and b applies events", func() bool {
				return a.revoked.Load() > 0 && b.assigned.Load() > 0 && b.Stats().Processed >= 50
			})
			t.Logf("b joined: a revoked %d partitions, b assigned %d; a %+v, b %+v", a.revoked.Load(), b.assigned.Load(), a.Stats(), b.Stats())
			if err := a.Stop(t); err != nil {
				t.Fatalf("a: %v", err)
			}
			bBefore := b.Stats().Processed
			eventually(t, 90*time.Second, "b takes a's partitions over", func() bool {
				return b.assigned.Load() == 3 && b.Stats().Processed >= bBefore+100
			})
			close(stopProducing)
			producing.Wait()
			n := produced.Load()
			effects := func() (rows, distinct int64) {
				if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT event_id) FROM effects").Scan(&rows, &distinct); err != nil {
					t.Fatal(err)
				}
				return rows, distinct
			}
			eventually(t, 120*time.Second, "every event applied", func() bool { _, d := effects(); return d >= n })
			if err := b.Stop(t); err != nil {
				t.Fatalf("b: %v", err)
			}
			rows, distinct := effects()
			as, bs := a.Stats(), b.Stats()
			var byA int64
			if err := db.QueryRow("SELECT COUNT(*) FROM effects WHERE member = 'a'").Scan(&byA); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d events; a %+v (%d effects), b %+v; effects %d rows, %d distinct", n, as, byA, bs, rows, distinct)
			if rows != n || distinct != n {
				t.Errorf("effects: %d rows, %d distinct, want %d each", rows, distinct, n)
			}
			if as.Duplicates+bs.Duplicates != 0 || as.Processed+bs.Processed != n || as.Processed != byA {
				t.Errorf("a %+v, b %+v: want no duplicate and %d processed in all", as, bs, n)
			}
		})
	}
}

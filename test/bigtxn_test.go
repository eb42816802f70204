package test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// hugeRows is the size of TestHugeTransaction's binlog transaction
// (HUGE_ROWS overrides it).
func hugeRows(t testing.TB) int {
	if s := os.Getenv("HUGE_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			t.Fatalf("HUGE_ROWS=%q: want a number >= 1000", s)
		}
		return n
	}
	return 1_000_000
}

// TestHugeTransaction writes one binlog transaction of a million outbox
// rows (an INSERT ... SELECT backfill) between small transactions, with a
// 4 s transaction timeout and 20,000 records per Kafka transaction, and
// SIGKILLs the router three times and stops it (SIGTERM) once while it streams
// the big one. The big
// transaction cannot fit one Kafka transaction: the router commits inside
// it, and each restart resumes inside it from the checkpoint. A
// read_committed consumer reads every row exactly once, in order, and the
// transactions after it too.
func TestHugeTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: 1,000,000-row transaction")
	}
	rng := faultRand(t)
	n := hugeRows(t)
	e := kfakeEnv(t)
	const name = "huge"
	r := startRouter(t, e.args(name, "--transaction-timeout", "4s", "--commit-records", "20000", "--shutdown-timeout", "3s")...)
	col := newCollector(t, e.kafka.Brokers, e.topicRegex())
	w := newWriter(e.db, rng, "agg", 20, 0)
	ctx := context.Background()
	for range 5 {
		if err := w.tx(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	col.waitProgress(t, r, 15, time.Minute, "small transactions before")

	began := time.Now()
	tx, err := e.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO orders (customer, total) VALUES ('backfill', 1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(fmt.Sprintf(`INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload)
		SELECT UUID(), 'order', CONCAT('big-', seq MOD 64), 'Big',
		       CONCAT('{"agg":"big-', seq MOD 64, '","seq":', seq, '}')
		FROM seq_1_to_%d`, n)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var bigGTID string
	if err := e.db.QueryRow("SELECT @@last_gtid").Scan(&bigGTID); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote one transaction (%s) of %d outbox rows in %s", bigGTID, n, time.Since(began).Round(time.Millisecond))

	// Kill while the big transaction streams; after each kill the stored
	// checkpoint lies inside it.
	began = time.Now()
	inside, kills := 0, 0
	for _, frac := range []int{15, 40, 65, 85} {
		// The router's own progress (its checkpoint), not the consumer's.
		eventually(t, 5*time.Minute, fmt.Sprintf("a checkpoint past %d%% of the big transaction", frac), func() bool {
			cp := loadFullCheckpoint(t, e, name)
			return !r.running() || cp.TxnGTID == bigGTID && cp.TxnRows >= n*frac/100
		})
		r.mustRun(fmt.Sprintf("%d%% of the big transaction", frac))
		time.Sleep(randDur(rng, 0, 200*time.Millisecond))
		how := "SIGKILL"
		if frac == 85 {
			// The last is a stop: with 3 s --shutdown-timeout it commits
			// inside the big transaction after 1.5 s (or at its end) and exits 0.
			how = "SIGTERM"
			began := time.Now()
			if code := r.stop(30 * time.Second); code != 0 {
				t.Errorf("SIGTERM inside the big transaction: exit code %d, want 0", code)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("SIGTERM inside the big transaction took %s, --shutdown-timeout 3s", took)
			}
		} else {
			r.kill()
			kills++
		}
		cp := loadFullCheckpoint(t, e, name)
		t.Logf("%s after %d events read: checkpoint %s, inside %q after %d rows", how, col.distinct(), cp.GTIDSet, cp.TxnGTID, cp.TxnRows)
		if cp.TxnGTID == bigGTID && cp.TxnRows > 0 && cp.TxnRows < n {
			inside++
		}
		r.restart()
	}
	for range 5 {
		if err := w.tx(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	want := committedRows(t, e.db)
	col.waitAll(t, want, 5*time.Minute)
	t.Logf("streamed in %s with %d kills", time.Since(began).Round(time.Millisecond), kills)
	r.mustRun("end")
	if code := r.stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	v := checkDelivery(t, want, col.settle(t, time.Second), nil)
	t.Logf("%s; kills %d, checkpoints inside the big transaction %d; sessions ended by a transaction timeout %d",
		v, kills, inside, r.logCount("--transaction-timeout"))
	if inside == 0 {
		t.Errorf("no kill found the checkpoint inside the big transaction: the test proved nothing")
	}
	if v.Events != n+30 {
		t.Errorf("%d events in the outbox table, want %d", v.Events, n+30)
	}
}

// loadFullCheckpoint returns the stored checkpoint record.
func loadFullCheckpoint(t testing.TB, e *env, name string) *checkpoint.Checkpoint {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cp, err := checkpoint.Load(ctx, e.prefix+"_checkpoints", name, kafkaOpts(e)...)
	if err != nil {
		t.Fatalf("loading checkpoint %q: %v", name, err)
	}
	return cp
}

package test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/test/harness"
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
// 4 s transaction timeout and 20,000 records per Kafka transaction (a
// fiftieth of HUGE_ROWS), and SIGKILLs the router three times and stops it
// (SIGTERM) once while it streams the big one. The big transaction cannot
// fit one Kafka transaction: the router commits inside it, and each
// restart resumes inside it from the checkpoint. A read_committed consumer
// reads every row exactly once, in order, and the transactions after it
// too. TestHugeTransactionSplitByTime covers the commits by time.
func TestHugeTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: 1,000,000-row transaction")
	}
	rng := harness.FaultRand(t)
	n := hugeRows(t)
	e := kfakeEnv(t)
	const name = "huge"
	r := harness.StartRouter(t, e.Args(name, "--transaction-timeout", "4s", "--commit-records", fmt.Sprint(n/50), "--shutdown-timeout", "10s")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 20, 0)
	ctx := context.Background()
	for range 5 {
		if err := w.Tx(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	col.WaitProgress(t, r, 15, time.Minute, "small transactions before")

	bigGTID := backfill(e, t, n)

	// Kill while the big transaction streams; after each kill the stored
	// checkpoint lies inside it.
	began := time.Now()
	inside, kills := 0, 0
	for _, frac := range []int{15, 40, 65, 85} {
		// The router's own progress (its checkpoint), not the consumer's.
		harness.Eventually(t, 5*time.Minute, fmt.Sprintf("a checkpoint past %d%% of the big transaction", frac), func() bool {
			cp := e.MustCheckpoint(name)
			return !r.Running() || cp.TxnGTID == bigGTID && cp.TxnRows >= n*frac/100
		})
		r.MustRun(fmt.Sprintf("%d%% of the big transaction", frac))
		time.Sleep(harness.RandDur(rng, 0, 200*time.Millisecond))
		how := "SIGKILL"
		if frac == 85 {
			// The last is a stop: with 10 s --shutdown-timeout it commits
			// inside the big transaction after 5 s (or at its end) and exits 0.
			// The other half is the budget for the flush and the commit: under
			// the race detector on a loaded machine 1.5 s was not always enough.
			how = "SIGTERM"
			began := time.Now()
			if code := r.Stop(30 * time.Second); code != 0 {
				t.Errorf("SIGTERM inside the big transaction: exit code %d, want 0", code)
			}
			if took := time.Since(began); took > 12*time.Second {
				t.Errorf("SIGTERM inside the big transaction took %s, --shutdown-timeout 10s", took)
			}
		} else {
			r.Kill()
			kills++
		}
		cp := e.MustCheckpoint(name)
		t.Logf("%s after %d events read: checkpoint %s, inside %q after %d rows", how, col.Distinct(), cp.GTIDSet, cp.TxnGTID, cp.TxnRows)
		if cp.TxnGTID == bigGTID && cp.TxnRows > 0 && cp.TxnRows < n {
			inside++
		}
		r.Restart()
	}
	for range 5 {
		if err := w.Tx(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	want := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, want, 5*time.Minute)
	t.Logf("streamed in %s with %d kills", time.Since(began).Round(time.Millisecond), kills)
	r.MustRun("end")
	if code := r.Stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	v := harness.CheckDelivery(t, want, col.Settle(t, time.Second), nil)
	t.Logf("%s; kills %d, checkpoints inside the big transaction %d; sessions ended by a transaction timeout %d",
		v, kills, inside, r.LogCount("--transaction-timeout"))
	if inside == 0 {
		t.Errorf("no kill found the checkpoint inside the big transaction: the test proved nothing")
	}
	if v.Events != n+30 {
		t.Errorf("%d events in the outbox table, want %d", v.Events, n+30)
	}
}

// backfill commits one transaction of a business row and n outbox rows
// (an INSERT ... SELECT), n/64 per aggregate with growing sequence
// numbers, and returns its GTID.
func backfill(e *harness.Env, t testing.TB, n int) string {
	t.Helper()
	began := time.Now()
	conn, err := e.DB.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	ctx := context.Background()
	tx, err := conn.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.Exec("INSERT INTO orders (customer, total) VALUES ('backfill', 1)")
	require.NoError(t, err)
	_, err = tx.Exec(fmt.Sprintf(`INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload)
		SELECT UUID(), 'order', CONCAT('big-', seq MOD 64), 'Big',
		       CONCAT('{"agg":"big-', seq MOD 64, '","seq":', seq, '}')
		FROM seq_1_to_%d`, n))
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	var gtid string
	require.NoError(t, conn.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&gtid))
	t.Logf("wrote one transaction (%s) of %d outbox rows in %s", gtid, n, time.Since(began).Round(time.Millisecond))
	return gtid
}

// TestHugeTransactionSplitByTime: a binlog transaction that takes longer
// to stream than half the transaction timeout is committed in parts by
// time alone. --commit-records (1,000,000) is larger than the whole
// transaction (10,000 rows), so no part can end by count; the broker
// holds each produce request 100 ms and the router buffers at most 300
// records, so streaming it takes over 10 s against a split age of 2 s
// (--transaction-timeout 4s). The stored checkpoint records show commits
// inside the transaction (txn_gtid its GTID, txn_rows growing), each at
// least the split age after the one before; a read_committed consumer
// reads every row exactly once and in order, and the transactions after
// it.
func TestHugeTransactionSplitByTime(t *testing.T) {
	rng := harness.FaultRand(t)
	const n, commitRecords, splitAge = 10_000, 1_000_000, 2 * time.Second
	e := slowKfakeEnv(t)
	const name = "bytime"
	slowProduce(t, e, 100*time.Millisecond)
	r := harness.StartRouter(t, e.Args(name, "--transaction-timeout", (2*splitAge).String(),
		"--commit-records", fmt.Sprint(commitRecords), "--max-buffered-records", "300")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 10, 0)
	ctx := context.Background()
	require.NoError(t, w.Tx(ctx, 3))
	bigGTID := backfill(e, t, n)
	for range 3 {
		require.NoError(t, w.Tx(ctx, 3))
	}
	want := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, want, 5*time.Minute)
	final := e.GTIDPos()
	e.WaitCheckpoint(name, final)
	require.Equal(t, 0, r.Stop(30*time.Second))
	v := harness.CheckDelivery(t, want, col.Settle(t, time.Second), nil)
	assert.Zero(t, v.Lost+v.Duplicated+v.Unknown+v.Disordered, v.String())
	assert.Equal(t, n+12, v.Events)

	var inside []*checkpoint.Checkpoint
	for _, cp := range e.CheckpointHistory(name, final) {
		if cp.TxnGTID == bigGTID {
			inside = append(inside, cp)
		}
	}
	require.NotEmpty(t, inside, "no checkpoint inside the big transaction: it was not split by time")
	for i, cp := range inside {
		prev, since := 0, time.Duration(0)
		if i > 0 {
			prev, since = inside[i-1].TxnRows, cp.Time.Sub(inside[i-1].Time)
			assert.GreaterOrEqual(t, since, splitAge, "part %d committed %s after the one before: before the split age", i+1, since)
		}
		assert.Greater(t, cp.TxnRows, prev, "txn_rows grows")
		assert.Less(t, cp.TxnRows, n, "a checkpoint inside the transaction")
		t.Logf("checkpoint inside %s after %d rows (+%d, %s after the one before)", bigGTID, cp.TxnRows, cp.TxnRows-prev, since.Round(time.Millisecond))
	}
	t.Logf("%d commits inside one binlog transaction of %d rows with --commit-records %d: split by time; %s; sessions ended by a transaction timeout %d",
		len(inside), n, commitRecords, v, r.LogCount("--transaction-timeout"))
}

// slowKfakeEnv is kfakeEnv for slowProduce: a cluster whose sleeping
// control functions are handled out of order (kfake.SleepOutOfOrder), so
// other requests go on while a produce request sleeps. kfake's in-order
// sleep queue can start a second waiter over the same queue when a
// request sleeps just as the queue empties, which the race detector
// reports in kfake itself.
func slowKfakeEnv(t *testing.T) *harness.Env { return kfakeEnv(t, kfake.SleepOutOfOrder()) }

// slowProduce makes the in-process kfake broker of a slowKfakeEnv take d
// to answer each produce request, until the test ends.
func slowProduce(t testing.TB, e *harness.Env, d time.Duration) {
	c := e.Kafka.Cluster
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.SleepControl(func() {
			select {
			case <-time.After(d):
			case <-done:
			}
		})
		return nil, nil, false
	})
}

package test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestFaultDatabaseRestart kills mariadbd (SIGKILL) and starts it again
// several times while an application writes, once right after a 20k-row
// transaction committed (the router is still streaming it), and cuts the
// router's binlog dump connection with KILL. The same router process must
// reconnect by itself and deliver every committed row exactly once.
func TestFaultDatabaseRestart(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	var watch *harness.TxnWatch
	if e.Kafka.Cluster != nil {
		watch = harness.WatchTxns(e.Kafka.Cluster, harness.RouterTxnIDs("dbrestart")...)
	}
	r := harness.StartRouter(t, e.Args("dbrestart")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	app := harness.NewWriter(e.DB, rng, "agg", 40, 0)
	l := harness.StartLoad(t, app, 500)
	col.WaitProgress(t, r, 200, time.Minute, "routing before the faults")
	ctx := context.Background()

	restart := func(what string) {
		t.Helper()
		time.Sleep(harness.RandDur(rng, 200*time.Millisecond, 1500*time.Millisecond)) // down time
		if err := e.Maria.Start(ctx); err != nil {
			t.Fatalf("%s: starting mariadbd again: %v", what, err)
		}
		r.MustRun(what)
		col.WaitProgress(t, r, 100, time.Minute, what+": routing after the restart")
		r.MustRun(what)
	}

	restarts := harness.ByMode(3, 10)
	for i := 1; i <= restarts; i++ {
		time.Sleep(harness.RandDur(rng, 300*time.Millisecond, 1500*time.Millisecond))
		r.MustRun(fmt.Sprintf("before database kill %d", i))
		if err := e.Maria.Kill(); err != nil {
			t.Fatal(err)
		}
		restart(fmt.Sprintf("database kill %d", i))
	}

	// A large transaction: the server dies while the router streams it, and
	// the router resumes inside it after reconnecting. Non-outbox rows make
	// it larger (40 MiB) than the socket buffers can hold, so the server is
	// still sending it when it dies. The load pauses so that what the
	// router produces next is of this transaction.
	l.Stop()
	col.WaitAll(t, harness.CommittedRows(t, e.DB), time.Minute)
	e.Exec("CREATE TABLE ballast (id BIGINT AUTO_INCREMENT PRIMARY KEY, data LONGBLOB)")
	big := harness.NewWriter(e.DB, rng, "big", 50, 0)
	big.Ballast, big.BallastRows = make([]byte, 1<<20), 2
	const bigRows = 20000
	var base int64
	if watch != nil {
		watch.SkipTopic(t, e, e.CheckpointTopic()) // count outbox records only
		base = watch.Records.Load()
	}
	if err := big.Tx(ctx, bigRows); err != nil {
		t.Fatalf("committing the %d-row transaction: %v", bigRows, err)
	}
	if watch != nil {
		// Kill once the router has started producing the transaction.
		for start := time.Now(); watch.Records.Load() == base && time.Since(start) < 30*time.Second; {
			time.Sleep(time.Millisecond)
		}
	}
	if err := e.Maria.Kill(); err != nil {
		t.Fatal(err)
	}
	if watch != nil {
		n := watch.Records.Load() - base
		t.Logf("mariadbd killed right after a %d-row transaction committed: the router had produced %d of its rows", bigRows, n)
		if n == 0 || n >= bigRows {
			t.Errorf("the kill did not land while the router was streaming the large transaction")
		}
	}
	l = harness.StartLoad(t, app, 500)
	restart("database kill in a large transaction")

	// A cut connection without a restart: KILL the binlog dump thread.
	cuts := harness.ByMode(2, 5)
	for i := 1; i <= cuts; i++ {
		time.Sleep(harness.RandDur(rng, 200*time.Millisecond, time.Second))
		id := dumpThread(t, e.DB, 0)
		if _, err := e.DB.Exec(fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
			t.Fatalf("KILL %d: %v", id, err)
		}
		dumpThread(t, e.DB, id) // the router connects again
		r.MustRun(fmt.Sprintf("KILL of the dump connection %d", i))
		col.WaitProgress(t, r, 100, time.Minute, "routing after KILL of the dump connection")
	}

	v := harness.FinishRun(t, e.DB, l, col, r, 3*time.Minute)
	lost := r.LogCount("binlog connection lost")
	t.Logf("database kills %d (one in a %d-row transaction), dump connections killed %d, reconnects logged %d, %s",
		restarts+1, bigRows, cuts, lost, v)
	if lost < restarts+1+cuts {
		t.Errorf("the router logged %d lost connections, want at least %d", lost, restarts+1+cuts)
	}
}

// dumpThread waits for the router's binlog dump connection (one whose id
// is not old) and returns its id.
func dumpThread(t testing.TB, db *sql.DB, old int64) int64 {
	t.Helper()
	var id int64
	harness.Eventually(t, time.Minute, "a binlog dump connection", func() bool {
		err := db.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump' AND ID <> ? ORDER BY ID DESC LIMIT 1", old).Scan(&id)
		return err == nil
	})
	return id
}

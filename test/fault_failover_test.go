package test

import (
	"database/sql"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestFailoverToReplica runs a primary and a GTID replica that re-logs
// what it applies (log_slave_updates: the replica's binlog carries the
// primary's GTIDs 0-1-N).
//
// failover: the router reads the primary under load and falls behind;
// the primary dies (and the router with it, or the router survives and is
// stopped); once the replica applied all it received it is promoted, the
// router is started on it with the same name and checkpoint topic, and
// the application goes on writing there. Every row is delivered once, in
// per-aggregate order across the failover.
//
// sidecar: a router with a new name reads the replica from its first
// binlog while the primary is written, and delivers every row once.
func TestFailoverToReplica(t *testing.T) {
	t.Run("failover", failoverTest)
	t.Run("sidecar", sidecarTest)
}

// replicaEnv is a primary env plus a replica of it.
func replicaEnv(t *testing.T) (*harness.Env, *devenv.MariaDB, *sql.DB) {
	e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ServerID: 1, LogSlaveUpdates: true}})
	replica := devenv.NewMariaDB(t, devenv.MariaDBConfig{ServerID: 2, LogSlaveUpdates: true})
	admin, err := replica.DB("")
	require.NoError(t, err)
	defer admin.Close()
	_, err = admin.Exec(fmt.Sprintf("CHANGE MASTER TO master_host='127.0.0.1', master_port=%d, master_user='root', "+
		"master_use_gtid=slave_pos, master_connect_retry=1; START SLAVE", e.Maria.Port()))
	require.NoError(t, err)
	waitReplicated(t, admin, e.GTIDPos()) // the outbox table is there
	// Not devenv.CreateDatabase: the replica must write nothing itself, or
	// its own GTIDs would break replication in strict mode.
	rdb, err := replica.DB(e.DBName)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rdb.Close() })
	return e, replica, rdb
}

// waitReplicated waits until the replica has applied pos.
func waitReplicated(t testing.TB, rdb *sql.DB, pos string) {
	t.Helper()
	var got string
	if err := harness.Poll(time.Minute, func() bool {
		return rdb.QueryRow("SELECT @@gtid_slave_pos").Scan(&got) == nil && got == pos
	}); err != nil {
		st := slaveStatus(t, rdb)
		t.Fatalf("replica applying %s: at %s after a minute; IO %s %q, SQL %s %q", pos, got,
			st["Slave_IO_Running"], st["Last_IO_Error"], st["Slave_SQL_Running"], st["Last_SQL_Error"])
	}
}

// slaveStatus is SHOW SLAVE STATUS as column name to value.
func slaveStatus(t testing.TB, rdb *sql.DB) map[string]string {
	t.Helper()
	rows, err := rdb.Query("SHOW SLAVE STATUS")
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	out := map[string]string{}
	if rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		for i, c := range cols {
			out[c] = vals[i].String
		}
	}
	return out
}

func failoverTest(t *testing.T) {
	rng := harness.FaultRand(t)
	e, replica, rdb := replicaEnv(t)
	const name = "failover"
	r := harness.StartRouter(t, e.Args(name, "--shutdown-timeout", "3s")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	app := harness.NewWriter(e.DB, rng, "agg", 40, 0)
	l := harness.StartLoad(t, app, 600)
	col.WaitProgress(t, r, harness.ByMode(1000, 10000), 2*time.Minute, "routing from the primary")

	// The router falls behind (paused while the application writes), the
	// replica gets everything, the primary dies.
	if err := r.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(harness.RandDur(rng, 500*time.Millisecond, 1500*time.Millisecond)) // rows pile up
	l.Stop()
	waitReplicated(t, rdb, e.GTIDPos())
	if err := e.Maria.Kill(); err != nil {
		t.Fatal(err)
	}
	// Either the router's host went down with the primary: what it had not
	// committed is a backlog the router on the replica must publish. Or it
	// survives, drains what the primary had sent (its socket buffers) and
	// is stopped.
	routerDied := rng.IntN(2) == 0
	if routerDied {
		r.Kill()
		t.Logf("primary and its router killed")
	} else {
		if err := r.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(harness.RandDur(rng, 0, 500*time.Millisecond))
		t.Logf("primary killed; the router, still running, exited with %d on SIGTERM", r.Stop(30*time.Second))
	}

	// The replica applied everything it received; it is promoted and the
	// application writes to it (GTIDs 0-2-N from now on).
	harness.Eventually(t, time.Minute, "replica applying all it received", func() bool {
		st := slaveStatus(t, rdb)
		var applied string
		return rdb.QueryRow("SELECT @@gtid_slave_pos").Scan(&applied) == nil && applied == st["Gtid_IO_Pos"]
	})
	_, err := rdb.Exec("STOP SLAVE; RESET SLAVE ALL")
	require.NoError(t, err)
	cp := e.CheckpointSet(name)
	t.Logf("checkpoint %s, replica at %s", cp, harness.GTIDPos(t, rdb))
	after := harness.GTIDSeqs(t, cp)[0]

	r2 := harness.StartRouter(t, harness.ArgsWith(e.Args(name), "--mysql-addr", replica.Addr())...)
	app.DB = rdb // same aggregates: their order must hold across the failover
	l = harness.StartLoad(t, app, 600)
	col.WaitProgress(t, r2, harness.ByMode(500, 5000), 2*time.Minute, "routing from the promoted replica")
	l.Stop()
	want := harness.CommittedRows(t, rdb)
	col.WaitAll(t, want, 2*time.Minute)
	if code := r2.Stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	got := col.Settle(t, time.Second)
	v := harness.CheckDelivery(t, want, got, nil)
	backlog, promoted := 0, 0
	for _, d := range got {
		if parts := strings.Split(d.GTID, "-"); len(parts) == 3 && parts[1] == "2" {
			promoted++
		} else if _, seq, ok := harness.ParseGTID(d.GTID); ok && seq > after {
			backlog++
		}
	}
	t.Logf("from the replica: %d events of the primary after the checkpoint, %d written after the promotion; %s", backlog, promoted, v)
	if routerDied && backlog == 0 {
		t.Errorf("the router had no backlog at the failover: the test proved nothing")
	}
}

func sidecarTest(t *testing.T) {
	rng := harness.FaultRand(t)
	e, replica, rdb := replicaEnv(t)
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 40, 0), 600)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	time.Sleep(harness.RandDur(rng, 500*time.Millisecond, 2*time.Second)) // a backlog on the replica
	r := harness.StartRouter(t, harness.ArgsWith(e.Args("sidecar", "--start", "earliest"), "--mysql-addr", replica.Addr())...)
	col.WaitProgress(t, r, harness.ByMode(1000, 10000), 2*time.Minute, "routing from the replica")
	l.Stop()
	waitReplicated(t, rdb, e.GTIDPos())
	want := harness.CommittedRows(t, rdb)
	require.Len(t, want, len(harness.CommittedRows(t, e.DB)), "the replica has every row")
	col.WaitAll(t, want, 2*time.Minute)
	if code := r.Stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	v := harness.CheckDelivery(t, want, col.Settle(t, time.Second), nil)
	t.Logf("sidecar on the replica: %s", v)
}

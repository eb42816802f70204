package test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// xaSession runs statements on one connection and then drops it.
func xaSession(e *harness.Env, t testing.TB, qs ...string) {
	t.Helper()
	ctx := t.Context()
	c, err := e.DB.Conn(ctx)
	require.NoError(t, err)
	defer func() {
		_ = c.Raw(func(any) error { return driver.ErrBadConn }) // never back to the pool
		_ = c.Close()
	}()
	for _, q := range qs {
		// A prepared transaction can be committed from another session
		// once the server has detached it from the session that
		// prepared it (xaRows waits for that: endSession).
		var err error
		require.NoError(t, harness.Poll(10*time.Second, func() bool {
			_, err = c.ExecContext(ctx, q)
			return err == nil || !strings.Contains(err.Error(), "XAER_NOTA")
		}), "%s: %v", q, err)
		require.NoError(t, err, q)
	}
}

// xaRows inserts n outbox rows of aggregate agg (sequence numbers 1..n)
// in an XA transaction named xid, prepared or, with onePhase, committed
// in one phase, and returns their event ids.
func xaRows(e *harness.Env, t testing.TB, xid, agg string, n int, onePhase bool) []string {
	return xaRowsPadded(e, t, xid, agg, n, 200, onePhase)
}

// endSession closes c, never returning it to the pool, and waits until
// the server has ended its session. A prepared XA transaction is then
// detached from any session, as a transaction manager leaves it, and can
// be committed or rolled back from another. Committing it earlier, while
// the server is still ending the preparing session, sometimes (about 1
// in 100 transactions on MariaDB 10.11) leaves its committed rows
// invisible to consistent reads (REPEATABLE READ and READ COMMITTED; READ
// UNCOMMITTED shows them, XA RECOVER and innodb_trx are empty) for good:
// a server race that the router does not see (it reads the binlog, which
// has the commit) but an outbox-table oracle does.
func endSession(e *harness.Env, t testing.TB, c *sql.Conn) {
	t.Helper()
	var id int64
	require.NoError(t, c.QueryRowContext(t.Context(), "SELECT CONNECTION_ID()").Scan(&id))
	_ = c.Raw(func(any) error { return driver.ErrBadConn }) // never back to the pool
	_ = c.Close()
	harness.Eventually(t, 30*time.Second, fmt.Sprintf("the server ending session %d", id), func() bool {
		var n int
		err := e.DB.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n)
		return err == nil && n == 0
	})
}

// xaRowsPadded is xaRows with pad bytes of filler in each payload.
func xaRowsPadded(e *harness.Env, t testing.TB, xid, agg string, n, pad int, onePhase bool) []string {
	t.Helper()
	ctx := t.Context()
	c, err := e.DB.Conn(ctx)
	require.NoError(t, err)
	ended := false
	defer func() {
		if !ended {
			_ = c.Raw(func(any) error { return driver.ErrBadConn })
			_ = c.Close()
		}
	}()
	exec := func(q string, args ...any) {
		_, err := c.ExecContext(ctx, q, args...)
		require.NoError(t, err, q)
	}
	exec("XA START " + xid)
	exec("INSERT INTO orders (customer, total) VALUES ('xa', 1)")
	var ids []string
	for done := 0; done < n; {
		k := min(n-done, max(1, 1<<20/(pad+100)))
		var sb strings.Builder
		args := make([]any, 0, 3*k)
		sb.WriteString("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES ")
		for i := range k {
			if i > 0 {
				sb.WriteByte(',')
			}
			id := uuid.NewString()
			ids = append(ids, id)
			sb.WriteString("(?, 'order', ?, 'XA', ?)")
			args = append(args, id, agg, fmt.Sprintf(`{"seq":%d,"pad":"%s"}`, done+i+1, strings.Repeat("p", pad)))
		}
		exec(sb.String(), args...)
		done += k
	}
	exec("XA END " + xid)
	if onePhase {
		exec("XA COMMIT " + xid + " ONE PHASE")
	} else {
		exec("XA PREPARE " + xid)
	}
	ended = true
	endSession(e, t, c)
	return ids
}

// countIDs is how often each id was read.
func countIDs(c *harness.Collector, ids []string) (seen, dups int) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, id := range ids {
		if n := c.IDs[id]; n > 0 {
			seen++
			dups += n - 1
		}
	}
	return seen, dups
}

// barrier commits an ordinary outbox row and waits until it is read: the
// router has then handled everything the binlog holds before it.
func barrier(e *harness.Env, t testing.TB, c *harness.Collector, r *harness.Router) {
	t.Helper()
	ev := harness.NewEvent("barrier-"+uuid.NewString()[:8], "Barrier", `{"seq":1}`)
	e.InsertTx(ev)
	harness.Eventually(t, time.Minute, "the barrier row", func() bool { return has(c, ev.ID) || !r.Running() })
	r.MustRun("barrier")
}

func has(c *harness.Collector, id string) bool {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.IDs[id] > 0
}

// TestXATransactions: rows of an XA transaction are published at its
// XA COMMIT, as rows of the committing transaction, and never when it is
// rolled back; XA COMMIT ... ONE PHASE is an ordinary transaction; XA
// transactions interleave with each other and with ordinary ones.
func TestXATransactions(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	r := harness.StartRouter(t, e.Args("xa")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	wait := func(what string, cond func() bool) {
		t.Helper()
		harness.Eventually(t, time.Minute, what, func() bool { return cond() || !r.Running() })
		r.MustRun(what)
	}

	// Prepared: nothing until the commit.
	committed := xaRows(e, t, "'xa-commit'", "xa-commit", 3, false)
	barrier(e, t, col, r)
	seen, _ := countIDs(col, committed)
	assert.Equal(t, 0, seen, "rows of a prepared XA transaction published before its commit")
	prepGTID := e.GTIDPos()
	xaSession(e, t, "XA COMMIT 'xa-commit'")
	commitGTID := e.GTIDPos()
	wait("the committed XA rows", func() bool { n, _ := countIDs(col, committed); return n == 3 })

	// Rolled back after prepare: never.
	rolledBack := xaRows(e, t, "'xa-rollback','branch',7", "xa-rollback", 2, false)
	xaSession(e, t, "XA ROLLBACK 'xa-rollback','branch',7")
	barrier(e, t, col, r)

	// One phase: an ordinary transaction.
	onePhase := xaRows(e, t, "'xa-one'", "xa-one", 2, true)
	wait("the one-phase XA rows", func() bool { n, _ := countIDs(col, onePhase); return n == 2 })

	// Interleaved: two prepared, ordinary rows between, committed and
	// rolled back in the other order, a binary XID.
	a := xaRows(e, t, "X'00ff10'", "xa-a", 2, false)
	b := xaRows(e, t, "'xa-b'", "xa-b", 2, false)
	ordinary := harness.NewEvent("ordinary", "Ordinary", `{"seq":1}`)
	e.InsertTx(ordinary)
	xaSession(e, t, "XA COMMIT 'xa-b'")
	xaSession(e, t, "XA ROLLBACK X'00ff10'")
	barrier(e, t, col, r)
	wait("the interleaved rows", func() bool { n, _ := countIDs(col, b); return n == 2 && has(col, ordinary.ID) })

	got := col.Settle(t, time.Second)
	for name, c := range map[string]struct {
		ids  []string
		want int
	}{"committed": {committed, 3}, "rolled back": {rolledBack, 0}, "one phase": {onePhase, 2},
		"interleaved committed": {b, 2}, "interleaved rolled back": {a, 0}} {
		n, dups := countIDs(col, c.ids)
		t.Logf("%s: %d of %d rows read, %d duplicates", name, n, len(c.ids), dups)
		assert.Equal(t, c.want, n, name)
		assert.Zero(t, dups, name)
	}
	// The committed rows carry the GTID of the XA COMMIT, not of the
	// prepare.
	for _, d := range got {
		if d.ID == committed[0] {
			assert.Equal(t, commitGTID, d.GTID, "binlog_gtid of a committed XA row (prepare was %s)", prepGTID)
		}
	}
	want := harness.CommittedRows(t, e.DB)
	v := harness.CheckDelivery(t, want, got, nil)
	t.Logf("read_committed consumer: %s", v)
	assert.Zero(t, v.Lost+v.Duplicated+v.Unknown+v.Disordered, v.String())
	require.Equal(t, 0, r.Stop(30*time.Second))
	cp := e.MustCheckpoint("xa")
	assert.Empty(t, cp.XAPrepared, "no XA transaction is still prepared")
}

// TestXARestartBetweenPrepareAndCommit stops the router (SIGKILL and
// SIGTERM) between XA PREPARE and XA COMMIT or ROLLBACK, with the commit
// written while it is down or after it is back, and kills it at random
// moments around XA COMMITs: each committed row is read exactly once,
// rolled back rows never.
func TestXARestartBetweenPrepareAndCommit(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "xa-restart"
	r := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	caughtUp := func(what string) {
		t.Helper()
		pos := e.GTIDPos()
		harness.Eventually(t, time.Minute, what, func() bool { return e.CheckpointAt(name, pos) || !r.Running() })
		r.MustRun(what)
	}
	var rolledBack, committed []string
	kills := 0

	// Prepared, checkpoint past the prepare, killed; committed while down.
	xaRows(e, t, "'down-commit'", "down-commit", 5, false)
	caughtUp("checkpoint past the prepare")
	cp := e.MustCheckpoint(name)
	require.Len(t, cp.XAPrepared, 1, "the checkpoint carries the prepared transaction")
	t.Logf("checkpoint %s carries %+v", cp.GTIDSet, cp.XAPrepared)
	r.Kill()
	kills++
	xaSession(e, t, "XA COMMIT 'down-commit'")
	r.Restart()

	// Prepared, killed, restarted, then committed.
	xaRows(e, t, "'up-commit'", "up-commit", 5, false)
	caughtUp("checkpoint past the second prepare")
	r.Kill()
	kills++
	r.Restart()
	caughtUp("restarted")
	xaSession(e, t, "XA COMMIT 'up-commit'")

	// Prepared, stopped with SIGTERM, rolled back while down.
	rolledBack = append(rolledBack, xaRows(e, t, "'down-rollback'", "down-rollback", 3, false)...)
	caughtUp("checkpoint past the third prepare")
	require.Equal(t, 0, r.Stop(30*time.Second))
	xaSession(e, t, "XA ROLLBACK 'down-rollback'")
	r.Restart()

	// Killed at random moments while XA transactions prepare and commit.
	for i := range harness.ByMode(4, 12) {
		xid := fmt.Sprintf("'kill-%d'", i)
		ids := xaRows(e, t, xid, fmt.Sprintf("kill-%d", i), 20+rng.IntN(200), false)
		if rng.IntN(3) == 0 {
			xaSession(e, t, "XA ROLLBACK "+xid)
			rolledBack = append(rolledBack, ids...)
		} else {
			xaSession(e, t, "XA COMMIT "+xid)
			committed = append(committed, ids...)
		}
		time.Sleep(harness.RandDur(rng, 0, 300*time.Millisecond)) // the moment of the kill is the point
		r.Kill()
		kills++
		r.Restart()
	}
	caughtUp("the end")
	want := harness.CommittedRows(t, e.DB)
	for _, id := range committed {
		require.Contains(t, want, id, "a committed XA row is missing from the outbox table")
	}
	col.WaitAll(t, want, time.Minute)
	require.Equal(t, 0, r.Stop(30*time.Second))
	got := col.Settle(t, time.Second)
	v := harness.CheckDelivery(t, want, got, nil)
	t.Logf("%d kills; read_committed consumer: %s", kills, v)
	assert.Zero(t, v.Lost+v.Duplicated+v.Unknown+v.Disordered, v.String())
	seen, _ := countIDs(col, rolledBack)
	assert.Zero(t, seen, "rows of rolled back XA transactions")
	assert.Empty(t, e.MustCheckpoint(name).XAPrepared)
}

// TestXALargePrepared commits a prepared XA transaction of 20,000 rows
// and 150 MiB of payloads, after two a tenth of its size: the rows are
// read again from the binlog and streamed, never held in memory, so the
// router's peak RSS while committing the large one is about that of the
// small ones (the race detector multiplies memory, so a fixed limit alone
// would not tell), and below the fault tests' limit.
func TestXALargePrepared(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: large XA transaction")
	}
	e := harness.NewEnv(t, harness.EnvOpts{})
	// A small event cache (with 1 MiB statements it bounds the parsed
	// events of both dump connections to a few MiB), a producer buffer
	// the small commits fill as well as the large one (4 MiB: one that
	// the 14 MiB of a small one never fill would make the comparison
	// measure the buffer, not the transaction), and a lower soft memory
	// limit, so that the collector's slack does not hide growth.
	r := harness.StartRouter(t, e.Args("xa-large", "--event-cache", "4", "--max-buffered-bytes", fmt.Sprint(4<<20),
		"--memory-limit", fmt.Sprint(48<<20))...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	const n, payloadMiB = 20000, 150
	pad := payloadMiB << 20 / n
	commit := func(xid string, rows int) float64 {
		t.Helper()
		ids := xaRowsPadded(e, t, "'"+xid+"'", xid, rows, pad, false)
		barrier(e, t, col, r)
		rss := harness.SampleRSS(r.PID())
		xaSession(e, t, "XA COMMIT '"+xid+"'")
		harness.Eventually(t, 3*time.Minute, "the rows of "+xid, func() bool { s, _ := countIDs(col, ids); return s == rows || !r.Running() })
		peak := rss.Stop()
		seen, dups := countIDs(col, ids)
		t.Logf("%s: %d of %d rows (%d MiB of payloads) read, %d duplicates; router peak RSS while committing %.0f MiB",
			xid, seen, rows, rows*pad>>20, dups, peak)
		assert.Equal(t, rows, seen)
		assert.Zero(t, dups)
		return peak
	}
	// The peak of one small commit varies by tens of MiB under the race
	// detector (150 to 190 MiB seen): the larger of two is the baseline.
	small := max(commit("small-1", n/10), commit("small-2", n/10))
	large := commit("large", n)
	assert.Less(t, large-small, float64(payloadMiB)/3, "memory grew with the prepared transaction: %.0f MiB for a tenth, %.0f MiB for all", small, large)
	assert.Less(t, large, harness.RSSLimitMB(), "memory bounded by configuration")
	require.Equal(t, 0, r.Stop(30*time.Second))
}

// TestXAPreparedBinlogPurged purges the binlog holding a prepare group
// before its commit: the router stops with exit code 3 and an error naming
// the XID, and publishes neither its rows nor anything after it.
func TestXAPreparedBinlogPurged(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "xa-purged"
	r := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	ids := xaRows(e, t, "'order-42'", "purged", 4, false)
	barrier(e, t, col, r)
	require.Equal(t, 0, r.Stop(30*time.Second))
	cp := e.MustCheckpoint(name)
	require.Len(t, cp.XAPrepared, 1)

	e.Exec("FLUSH BINARY LOGS")
	newest := e.NewestBinlog()
	e.WaitBinlogDumpsGone()
	e.PurgeBinlogsTo(newest)
	xaSession(e, t, "XA COMMIT 'order-42'")
	after := harness.NewEvent("after", "After", `{"seq":1}`)
	e.InsertTx(after)

	r.Restart()
	code := r.Wait(time.Minute)
	stopLine := r.LastLogLine("binlog-router stopped")
	t.Logf("exit code %d; router's last words: %s", code, stopLine)
	assert.Equal(t, 3, code, "exit code for a purged binlog")
	assert.Contains(t, stopLine, "XA transaction 'order-42'", "the error names the XID")
	assert.Contains(t, stopLine, cp.XAPrepared[0].File, "the error names the purged binlog")
	got := col.Settle(t, time.Second)
	seen, _ := countIDs(col, ids)
	assert.Zero(t, seen, "rows of the purged prepare group")
	assert.False(t, has(col, after.ID), "nothing after the commit is published")
	t.Logf("read_committed consumer read %d records (the barrier only)", len(got))
}

// TestXACommitOfUnknownPrepare starts a router with --start latest while
// an XA transaction is prepared: its prepare group lies before the start
// position, so at its XA COMMIT the router cannot know its rows. It stops
// with an error naming the XID (exit code 1) instead of guessing, and
// publishes nothing from the commit on.
func TestXACommitOfUnknownPrepare(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	ids := xaRows(e, t, "'before-start'", "before", 2, false)
	r := harness.StartRouter(t, e.Args("xa-unknown", "--start", "latest")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	// The start position is read when the router starts streaming.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, r.WaitLog(ctx, "no checkpoint stored; starting"))
	barrier(e, t, col, r)
	xaSession(e, t, "XA COMMIT 'before-start'")
	after := harness.NewEvent("after", "After", `{"seq":1}`)
	e.InsertTx(after)
	code := r.Wait(time.Minute)
	stopLine := r.LastLogLine("binlog-router stopped")
	t.Logf("exit code %d; router's last words: %s", code, stopLine)
	assert.Equal(t, 1, code)
	assert.Contains(t, stopLine, "XA transaction 'before-start'")
	assert.Contains(t, stopLine, "prepared before the start position")
	got := col.Settle(t, time.Second)
	seen, _ := countIDs(col, ids)
	assert.Zero(t, seen)
	assert.False(t, has(col, after.ID), "nothing after the commit is published")
	t.Logf("read_committed consumer read %d records (the barrier only)", len(got))
}

// TestXAConnectionsCutDuringReread cuts the binlog dump connections (the
// main one and the one reading a prepare group again) with KILL, three
// times, while a large XA COMMIT is being published: the same router
// process reconnects, reads the commit again, skips the rows it handed
// over, and each row is read exactly once. The broker takes 100 ms to
// answer each produce request and the router buffers at most 500 records,
// so the reread of the 20,000 rows (1 KiB payloads) lasts many seconds;
// with a Kafka transaction every 1,000 records the consumer sees its
// progress. The cuts land after an eighth, a quarter and three eighths of
// the rows, while the reread connection is up: it closes once the server
// has sent the whole prepare group, which the router's buffers cannot
// hold while more than half of it is left.
func TestXAConnectionsCutDuringReread(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: large XA transaction")
	}
	e := slowKfakeEnv(t)
	r := harness.StartRouter(t, e.Args("xa-cut", "--max-buffered-records", "500", "--commit-records", "1000")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	const n, cuts = 20000, 3
	ids := xaRowsPadded(e, t, "'cut'", "cut", n, 1000, false)
	barrier(e, t, col, r)
	slowProduce(t, e, 100*time.Millisecond)
	dumps := func() []int64 {
		var out []int64
		rows, err := e.DB.Query("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'")
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var id int64
			require.NoError(t, rows.Scan(&id))
			out = append(out, id)
		}
		require.NoError(t, rows.Err())
		return out
	}
	xaSession(e, t, "XA COMMIT 'cut'")
	for kill := 1; kill <= cuts; kill++ {
		// Another eighth of the rows is read, and the reread connection
		// is up (again) beside the main one.
		var conns []int64
		harness.Eventually(t, time.Minute, fmt.Sprintf("%d rows read and the reread connection up before cut %d", kill*n/8, kill), func() bool {
			s, _ := countIDs(col, ids)
			if s < kill*n/8 {
				return !r.Running()
			}
			conns = dumps()
			return len(conns) >= 2 || !r.Running()
		})
		r.MustRun(fmt.Sprintf("before cut %d", kill))
		seen, _ := countIDs(col, ids)
		require.Less(t, seen, n, "the reread ended before cut %d: it must last longer", kill)
		for _, id := range conns {
			_, _ = e.DB.Exec(fmt.Sprintf("KILL CONNECTION %d", id))
		}
		t.Logf("cut %d: %d dump connections (%d of %d rows read so far)", kill, len(conns), seen, n)
	}
	harness.Eventually(t, 3*time.Minute, "the XA rows", func() bool { s, _ := countIDs(col, ids); return s == n || !r.Running() })
	require.Equal(t, 0, r.Stop(30*time.Second))
	want := harness.CommittedRows(t, e.DB)
	v := harness.CheckDelivery(t, want, col.Settle(t, time.Second), nil)
	t.Logf("%d cuts during the reread; read_committed consumer: %s; reconnects logged %d", cuts, v, r.LogCount("reconnecting"))
	assert.Zero(t, v.Lost+v.Duplicated+v.Unknown+v.Disordered, v.String())
}

package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The prune user of these tests: SELECT and DELETE on the outbox table,
// nothing else (docs/retention.md).
const pruneUser, prunePassword = "binlog_router_prune", "prune-s3cret"

// grantPrune creates the prune user with docs/retention.md's grant on
// table and returns the prune flags that use it.
func (e *env) grantPrune(tables ...string) []string {
	e.t.Helper()
	e.exec("CREATE USER '" + pruneUser + "'@'%' IDENTIFIED BY '" + prunePassword + "'")
	for _, table := range tables {
		e.exec("GRANT SELECT, DELETE ON " + table + " TO '" + pruneUser + "'@'%'")
	}
	pw := filepath.Join(e.t.TempDir(), "prune-password")
	require.NoError(e.t, os.WriteFile(pw, []byte(prunePassword+"\n"), 0o600))
	return []string{"--prune-mysql-user", pruneUser, "--prune-mysql-password-file", pw}
}

// insertAged commits n outbox rows of type typ created age ago, in
// transactions of at most 50 rows, into table, and returns their event
// ids.
func (e *env) insertAged(table, typ string, age time.Duration, n int) []string {
	e.t.Helper()
	ctx := context.Background()
	at := time.Now().Add(-age)
	var ids []string
	for len(ids) < n {
		tx, err := e.db.BeginTx(ctx, nil)
		require.NoError(e.t, err)
		for i := 0; i < 50 && len(ids) < n; i++ {
			id := uuid.NewString()
			_, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (event_id, aggregate_type, aggregate_id, event_type, payload, created_at) "+
				"VALUES (?, 'order', ?, ?, '{}', FROM_UNIXTIME(?))", id, fmt.Sprintf("agg-%d", len(ids)%5), typ, float64(at.UnixMicro())/1e6)
			require.NoError(e.t, err)
			ids = append(ids, id)
		}
		require.NoError(e.t, tx.Commit())
	}
	return ids
}

// outboxIDs are the event ids in table, sorted.
func (e *env) outboxIDs(table string) []string {
	e.t.Helper()
	rows, err := e.db.Query("SELECT event_id FROM " + table + " ORDER BY event_id")
	require.NoError(e.t, err)
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		require.NoError(e.t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(e.t, rows.Err())
	return ids
}

// pruneRun runs `binlog-router prune` with the router's flags args, the
// prune flags and extra.
func pruneRun(t testing.TB, args, pruneFlags []string, extra ...string) cliResult {
	t.Helper()
	all := append(append(append([]string{"prune"}, args...), pruneFlags...), extra...)
	return cliRun(t, all...)
}

var deletedRE = regexp.MustCompile(`prune: deleted (\d+) rows`)

// deletedCount is the count of prune's summary line.
func deletedCount(t testing.TB, res cliResult) int {
	t.Helper()
	m := deletedRE.FindStringSubmatch(res.stdout)
	require.NotNil(t, m, "prune's summary line: %s\n%s", res.stdout, res.stderr)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

func sorted(s ...[]string) []string {
	var out []string
	for _, p := range s {
		out = append(out, p...)
	}
	sort.Strings(out)
	return out
}

// TestPruneDeletesOnlyPublishedOldRows: prune deletes the rows older than
// --older-than and keeps the others; rows older than that which the
// router has not published (it is stopped) are not deleted, the command
// refusing with the fix; once the router published them they are; and
// --prune-margin keeps the rows created within it before the moment the
// checkpoint covers, whatever --older-than says.
func TestPruneDeletesOnlyPublishedOldRows(t *testing.T) {
	e := newEnv(t, envOpts{})
	pf := e.grantPrune("shop.outbox")
	args := e.args("prune1", "--idle-checkpoint", "200ms")
	e.insertAged("outbox", "Old", 10*24*time.Hour, 10)
	days := e.insertAged("outbox", "Days", 2*24*time.Hour, 10)
	fresh := e.insertAged("outbox", "Fresh", 0, 10)

	res := pruneRun(t, args, pf, "--older-than", "7d")
	require.Equal(t, 1, res.code, "no checkpoint yet: %s", res.stderr)
	assert.Contains(t, res.stderr, "no checkpoint stored")
	assert.Contains(t, res.stderr, "run the router first")
	assert.Len(t, e.outboxIDs("outbox"), 30, "nothing deleted without a checkpoint")

	r := startRouter(t, args...)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	c.read(30, 15*time.Second)

	res = pruneRun(t, args, pf, "--older-than", "7d", "--prune-batch", "3")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, 10, deletedCount(t, res))
	assert.Contains(t, res.stdout, "in 4 batches", "10 rows in batches of 3")
	assert.Equal(t, sorted(days, fresh), e.outboxIDs("outbox"), "only the rows older than 7d deleted")

	// Unpublished rows, created long ago: the router is stopped.
	require.Equal(t, 0, r.stop(20*time.Second))
	late := e.insertAged("outbox", "Late", 3*24*time.Hour, 10)
	res = pruneRun(t, args, pf, "--older-than", "1d", "--prune-margin", "0s", "--prune-checkpoint-wait", "1s")
	require.Equal(t, 1, res.code, "the router is behind: %s", res.stderr)
	assert.Contains(t, res.stderr, "the router is stopped or behind")
	assert.Equal(t, sorted(days, fresh, late), e.outboxIDs("outbox"), "nothing deleted past the checkpoint")

	r.start()
	c.read(10, 15*time.Second)
	res = pruneRun(t, args, pf, "--older-than", "1d", "--prune-margin", "0s")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, 20, deletedCount(t, res))
	assert.Equal(t, sorted(fresh), e.outboxIDs("outbox"), "published now: deleted")

	// The fresh rows are older than 1s, but within the margin.
	res = pruneRun(t, args, pf, "--older-than", "1s", "--prune-margin", "1h")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, 0, deletedCount(t, res))
	assert.Equal(t, sorted(fresh), e.outboxIDs("outbox"), "the margin keeps them")
	assert.Contains(t, res.stderr, `"message":"prune done"`, "the totals are logged")
}

// TestPruneDeletesAreNotRouted: a read_committed consumer reads each
// inserted row once and nothing else, although prune deleted rows of the
// outbox table while the router ran.
func TestPruneDeletesAreNotRouted(t *testing.T) {
	e := newEnv(t, envOpts{})
	pf := e.grantPrune("shop.outbox")
	args := e.args("prune2", "--idle-checkpoint", "200ms")
	startRouter(t, args...)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	old := e.insertAged("outbox", "Old", 10*24*time.Hour, 120)
	got := recordIDs(c.read(120, 15*time.Second))

	res := pruneRun(t, args, pf, "--older-than", "7d", "--prune-batch", "25")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, 120, deletedCount(t, res))
	assert.Empty(t, e.outboxIDs("outbox"))

	after := e.insertAged("outbox", "After", 0, 5)
	got = append(got, c.readIDsUntil(func(ids []string) bool { return len(ids) >= 5 }, 15*time.Second)...)
	got = append(got, recordIDs(c.quiet(2*time.Second))...)
	assert.Equal(t, sorted(old, after), sorted(got), "the inserted rows, each once, and no record of a DELETE")
}

// TestPruneDuringCatchUpLosesNothing: prune deletes rows while the router
// catches up a backlog and a writer keeps inserting rows created long ago
// (so prune may delete rows the router has not read yet); every event is
// read exactly once.
func TestPruneDuringCatchUpLosesNothing(t *testing.T) {
	e := newEnv(t, envOpts{})
	pf := e.grantPrune("shop.outbox")
	args := e.args("prune3", "--idle-checkpoint", "200ms")
	r := startRouter(t, args...)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	first := e.insertAged("outbox", "First", 10*24*time.Hour, 1)
	got := recordIDs(c.read(1, 15*time.Second))
	require.Equal(t, 0, r.stop(20*time.Second))

	backlog := e.insertAged("outbox", "Backlog", 10*24*time.Hour, 3000)
	p := startCommand(t, "prune", append(append(args, pf...), "--older-than", "1d", "--prune-margin", "0s",
		"--prune-batch", "100", "--prune-pause", "0s", "--prune-rate", "3000", "--prune-checkpoint-wait", "60s")...)
	r.start()
	// While the router catches up and prune waits, then deletes.
	var during []string
	overlapped := false
	for i := 0; i < 120 && p.running(); i++ {
		during = append(during, e.insertAged("outbox", "During", 10*24*time.Hour, 50)...)
		overlapped = overlapped || len(e.outboxIDs("outbox")) < 1+len(backlog)+len(during)
	}
	require.Equal(t, 0, p.wait(60*time.Second), "prune: %s", p.out.String())
	assert.True(t, overlapped, "prune deleted rows while rows were inserted")
	all := sorted(first, backlog, during)
	got = append(got, c.readIDsUntil(func(ids []string) bool { return len(ids) >= len(all)-1 }, 60*time.Second)...)
	got = append(got, recordIDs(c.quiet(2*time.Second))...)
	assert.Equal(t, all, sorted(got), "every event read exactly once")
	left := len(e.outboxIDs("outbox"))
	t.Logf("%d events, %d rows left in the table; prune: %s", len(all), left, lastLine(p.out.String(), "prune: deleted"))
	assert.LessOrEqual(t, left, len(all)-len(backlog), "prune deleted at least the backlog")
}

// lastLine is the last line of log containing s.
func lastLine(log, s string) string {
	re := regexp.MustCompile(`(?m)^.*` + regexp.QuoteMeta(s) + `.*$`)
	m := re.FindAllString(log, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

// TestPruneDryRun: --dry-run prints how many rows it would delete and
// deletes none; a table without the creation time column is refused
// before anything is deleted.
func TestPruneDryRun(t *testing.T) {
	e := newEnv(t, envOpts{})
	pf := e.grantPrune("shop.outbox")
	args := e.args("prune4", "--idle-checkpoint", "200ms")
	old := e.insertAged("outbox", "Old", 10*24*time.Hour, 20)
	fresh := e.insertAged("outbox", "Fresh", 0, 5)
	startRouter(t, args...)
	newConsumer(t, e.kafka.Brokers, e.topicRegex()).read(25, 15*time.Second)

	res := pruneRun(t, args, pf, "--older-than", "7d", "--dry-run")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Regexp(t, `prune: dry run: 20 rows created before \S+ would be deleted; nothing deleted`, res.stdout)
	assert.Equal(t, sorted(old, fresh), e.outboxIDs("outbox"), "nothing deleted")

	// A table without the creation time column: refused before any delete.
	e.exec("CREATE TABLE outbox_nc (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36) NOT NULL, aggregate_type VARCHAR(255) NOT NULL, " +
		"aggregate_id VARCHAR(255) NOT NULL, event_type VARCHAR(255) NOT NULL, payload LONGTEXT NULL)")
	e.exec("GRANT SELECT, DELETE ON shop.outbox_nc TO '" + pruneUser + "'@'%'")
	res = pruneRun(t, append(args, "--outbox-table", "shop.outbox_nc"), pf, "--older-than", "7d")
	require.Equal(t, 2, res.code, res.stderr)
	assert.Contains(t, res.stderr, `outbox table shop.outbox_nc: no created-at column: column "created_at" does not exist; set --column-created-at`)
	assert.Equal(t, sorted(old, fresh), e.outboxIDs("outbox"), "nothing deleted in the other table either")
}

// TestPrunePartitionDrop: the partition-dropping idiom of
// docs/retention.md on a RANGE-partitioned outbox table, while the router
// runs: the oldest partition dropped, the newest split to make room; the
// router keeps routing the rows inserted after, each once.
func TestPrunePartitionDrop(t *testing.T) {
	e := newEnv(t, envOpts{})
	now := time.Now()
	bound := func(age time.Duration) int64 { return now.Add(-age).Unix() }
	e.exec(fmt.Sprintf(`CREATE TABLE outbox_p (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  event_id CHAR(36) NOT NULL,
  aggregate_type VARCHAR(255) NOT NULL,
  aggregate_id VARCHAR(255) NOT NULL,
  event_type VARCHAR(255) NOT NULL,
  payload LONGTEXT NULL,
  created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  PRIMARY KEY (id, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
PARTITION BY RANGE (UNIX_TIMESTAMP(created_at)) (
  PARTITION p_old VALUES LESS THAN (%d),
  PARTITION p_recent VALUES LESS THAN (%d),
  PARTITION p_max VALUES LESS THAN MAXVALUE)`, bound(7*24*time.Hour), bound(time.Hour)))
	args := e.args("prune5", "--outbox-table", "shop.outbox_p", "--idle-checkpoint", "200ms")
	r := startRouter(t, args...)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	old := e.insertAged("outbox_p", "Old", 10*24*time.Hour, 10)
	recent := e.insertAged("outbox_p", "Recent", 2*24*time.Hour, 10)
	fresh := e.insertAged("outbox_p", "Fresh", 0, 10)
	got := recordIDs(c.read(30, 15*time.Second))

	e.exec("ALTER TABLE outbox_p DROP PARTITION p_old")
	e.exec(fmt.Sprintf("ALTER TABLE outbox_p REORGANIZE PARTITION p_max INTO (PARTITION p_today VALUES LESS THAN (%d), PARTITION p_max VALUES LESS THAN MAXVALUE)",
		bound(-time.Hour)))
	assert.Equal(t, sorted(recent, fresh), e.outboxIDs("outbox_p"), "the oldest partition's rows are gone")
	later := e.insertAged("outbox_p", "Later", 0, 10)
	later = append(later, e.insertAged("outbox_p", "Later", -2*time.Hour, 10)...)
	got = append(got, c.readIDsUntil(func(ids []string) bool { return len(ids) >= 20 }, 15*time.Second)...)
	got = append(got, recordIDs(c.quiet(2*time.Second))...)
	assert.Equal(t, sorted(old, recent, fresh, later), sorted(got), "each row routed once, before and after the DDL")
	assert.True(t, r.running(), "the router runs on after the DDL: %s", tail(r.out.String(), 20))
}

// TestPruneInterval: run with --prune-interval prunes inside the router:
// the old rows are deleted once published, the fresh ones kept, rows
// inserted later pruned too, and every row is routed once.
func TestPruneInterval(t *testing.T) {
	e := newEnv(t, envOpts{})
	pf := e.grantPrune("shop.outbox")
	old := e.insertAged("outbox", "Old", 10*24*time.Hour, 100)
	fresh := e.insertAged("outbox", "Fresh", 0, 5)
	args := append(e.args("prune6", "--idle-checkpoint", "200ms", "--prune-interval", "500ms", "--older-than", "7d",
		"--metrics-addr", "127.0.0.1:0"), pf...)
	r := startRouter(t, args...)
	base := "http://" + metricsAddr(t, r)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	got := recordIDs(c.read(105, 15*time.Second))
	eventually(t, 15*time.Second, "the old rows pruned", func() bool { return len(e.outboxIDs("outbox")) == len(fresh) })
	assert.Equal(t, sorted(fresh), e.outboxIDs("outbox"))
	later := e.insertAged("outbox", "Later", 10*24*time.Hour, 10)
	got = append(got, c.readIDsUntil(func(ids []string) bool { return len(ids) >= 10 }, 15*time.Second)...)
	got = append(got, recordIDs(c.quiet(time.Second))...)
	assert.Equal(t, sorted(old, fresh, later), sorted(got), "every row routed once")
	eventually(t, 15*time.Second, "the later old rows pruned", func() bool { return len(e.outboxIDs("outbox")) == len(fresh) })
	assert.True(t, r.running(), "the router runs on")
	// A prune's rows are counted once it has ended.
	eventually(t, 15*time.Second, "the pruned rows counted", func() bool {
		return metricValue(t, base, "binlog_router_prune_rows_deleted_total") == float64(len(old)+len(later))
	})
	assert.Positive(t, metricValue(t, base, `binlog_router_prune_runs_total{result="ok"}`))
	assert.Positive(t, metricValue(t, base, "binlog_router_prune_cutoff_timestamp_seconds"))
	assert.Contains(t, r.out.String(), `"component":"prune"`)
	assert.Regexp(t, `"message":"prune done"`, r.out.String())
}

// TestPruneIntervalNeedsItsFlags: run refuses --prune-interval without
// --older-than and --prune-mysql-user, naming both.
func TestPruneIntervalNeedsItsFlags(t *testing.T) {
	e := newEnv(t, envOpts{})
	res := cliRun(t, append([]string{"run"}, e.args("prune7", "--prune-interval", "1h")...)...)
	assert.Equal(t, 2, res.code, res.stderr)
	assert.Contains(t, res.stderr, "--older-than")
	assert.Contains(t, res.stderr, "--prune-mysql-user")
}

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

	"github.com/binlog-router/binlog-router/test/harness"
)

// The prune user of these tests: SELECT and DELETE on the outbox table,
// nothing else (docs/retention.md).
const pruneUser, prunePassword = "binlog_router_prune", "prune-s3cret"

// grantPrune creates the prune user with docs/retention.md's grant on
// table and returns the prune flags that use it.
func grantPrune(e *harness.Env, tables ...string) []string {
	e.T.Helper()
	e.Exec("CREATE USER '" + pruneUser + "'@'%' IDENTIFIED BY '" + prunePassword + "'")
	for _, table := range tables {
		e.Exec("GRANT SELECT, DELETE ON " + table + " TO '" + pruneUser + "'@'%'")
	}
	pw := filepath.Join(e.T.TempDir(), "prune-password")
	require.NoError(e.T, os.WriteFile(pw, []byte(prunePassword+"\n"), 0o600))
	return []string{"--prune-mysql-user", pruneUser, "--prune-mysql-password-file", pw}
}

// insertAged commits n outbox rows of type typ created age ago, in
// transactions of at most 50 rows, into table, and returns their event
// ids.
func insertAged(e *harness.Env, table, typ string, age time.Duration, n int) []string {
	e.T.Helper()
	ctx := context.Background()
	at := time.Now().Add(-age)
	var ids []string
	for len(ids) < n {
		tx, err := e.DB.BeginTx(ctx, nil)
		require.NoError(e.T, err)
		for i := 0; i < 50 && len(ids) < n; i++ {
			id := uuid.NewString()
			_, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (event_id, aggregate_type, aggregate_id, event_type, payload, created_at) "+
				"VALUES (?, 'order', ?, ?, '{}', FROM_UNIXTIME(?))", id, fmt.Sprintf("agg-%d", len(ids)%5), typ, float64(at.UnixMicro())/1e6)
			require.NoError(e.T, err)
			ids = append(ids, id)
		}
		require.NoError(e.T, tx.Commit())
	}
	return ids
}

// outboxIDs are the event ids in table, sorted.
func outboxIDs(e *harness.Env, table string) []string {
	e.T.Helper()
	rows, err := e.DB.Query("SELECT event_id FROM " + table + " ORDER BY event_id")
	require.NoError(e.T, err)
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		require.NoError(e.T, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(e.T, rows.Err())
	return ids
}

// pruneRun runs `binlog-router prune` with the router's flags args, the
// prune flags and extra.
func pruneRun(t testing.TB, args, pruneFlags []string, extra ...string) harness.CLIResult {
	t.Helper()
	all := append(append(append([]string{"prune"}, args...), pruneFlags...), extra...)
	return harness.RunCLI(t, all...)
}

var deletedRE = regexp.MustCompile(`prune: deleted (\d+) rows`)

// deletedCount is the count of prune's summary line.
func deletedCount(t testing.TB, res harness.CLIResult) int {
	t.Helper()
	m := deletedRE.FindStringSubmatch(res.Stdout)
	require.NotNil(t, m, "prune's summary line: %s\n%s", res.Stdout, res.Stderr)
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
	e := harness.NewEnv(t, harness.EnvOpts{})
	pf := grantPrune(e, "shop.outbox")
	args := e.Args("prune1", "--idle-checkpoint", "200ms")
	insertAged(e, "outbox", "Old", 10*24*time.Hour, 10)
	days := insertAged(e, "outbox", "Days", 2*24*time.Hour, 10)
	fresh := insertAged(e, "outbox", "Fresh", 0, 10)

	res := pruneRun(t, args, pf, "--older-than", "7d")
	require.Equal(t, 1, res.Code, "no checkpoint yet: %s", res.Stderr)
	assert.Contains(t, res.Stderr, "no checkpoint stored")
	assert.Contains(t, res.Stderr, "run the router first")
	assert.Len(t, outboxIDs(e, "outbox"), 30, "nothing deleted without a checkpoint")

	r := harness.StartRouter(t, args...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	c.Read(30, 15*time.Second)

	res = pruneRun(t, args, pf, "--older-than", "7d", "--prune-batch", "3")
	require.Equal(t, 0, res.Code, res.Stderr)
	assert.Equal(t, 10, deletedCount(t, res))
	assert.Contains(t, res.Stdout, "in 4 batches", "10 rows in batches of 3")
	assert.Equal(t, sorted(days, fresh), outboxIDs(e, "outbox"), "only the rows older than 7d deleted")

	// Unpublished rows, created long ago: the router is stopped.
	require.Equal(t, 0, r.Stop(20*time.Second))
	late := insertAged(e, "outbox", "Late", 3*24*time.Hour, 10)
	res = pruneRun(t, args, pf, "--older-than", "1d", "--prune-margin", "0s", "--prune-checkpoint-wait", "1s")
	require.Equal(t, 1, res.Code, "the router is behind: %s", res.Stderr)
	assert.Contains(t, res.Stderr, "the router is stopped or behind")
	assert.Equal(t, sorted(days, fresh, late), outboxIDs(e, "outbox"), "nothing deleted past the checkpoint")

	r.Restart()
	c.Read(10, 15*time.Second)
	res = pruneRun(t, args, pf, "--older-than", "1d", "--prune-margin", "0s")
	require.Equal(t, 0, res.Code, res.Stderr)
	assert.Equal(t, 20, deletedCount(t, res))
	assert.Equal(t, sorted(fresh), outboxIDs(e, "outbox"), "published now: deleted")

	// The fresh rows are older than 1s, but within the margin.
	res = pruneRun(t, args, pf, "--older-than", "1s", "--prune-margin", "1h")
	require.Equal(t, 0, res.Code, res.Stderr)
	assert.Equal(t, 0, deletedCount(t, res))
	assert.Equal(t, sorted(fresh), outboxIDs(e, "outbox"), "the margin keeps them")
	assert.Contains(t, res.Stderr, `"message":"prune done"`, "the totals are logged")
}

// TestPruneDeletesAreNotRouted: a read_committed consumer reads each
// inserted row once and nothing else, although prune deleted rows of the
// outbox table while the router ran.
func TestPruneDeletesAreNotRouted(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	pf := grantPrune(e, "shop.outbox")
	args := e.Args("prune2", "--idle-checkpoint", "200ms")
	harness.StartRouter(t, args...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	old := insertAged(e, "outbox", "Old", 10*24*time.Hour, 120)
	got := harness.RecordIDs(c.Read(120, 15*time.Second))

	res := pruneRun(t, args, pf, "--older-than", "7d", "--prune-batch", "25")
	require.Equal(t, 0, res.Code, res.Stderr)
	assert.Equal(t, 120, deletedCount(t, res))
	assert.Empty(t, outboxIDs(e, "outbox"))

	after := insertAged(e, "outbox", "After", 0, 5)
	got = append(got, c.ReadIDsUntil(func(ids []string) bool { return len(ids) >= 5 }, 15*time.Second)...)
	got = append(got, harness.RecordIDs(c.Quiet(2*time.Second))...)
	assert.Equal(t, sorted(old, after), sorted(got), "the inserted rows, each once, and no record of a DELETE")
}

// TestPruneDuringCatchUpLosesNothing: prune deletes rows while the router
// catches up a backlog and a writer keeps inserting rows created long ago
// (so prune may delete rows the router has not read yet); every event is
// read exactly once.
func TestPruneDuringCatchUpLosesNothing(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	pf := grantPrune(e, "shop.outbox")
	args := e.Args("prune3", "--idle-checkpoint", "200ms")
	r := harness.StartRouter(t, args...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	first := insertAged(e, "outbox", "First", 10*24*time.Hour, 1)
	got := harness.RecordIDs(c.Read(1, 15*time.Second))
	require.Equal(t, 0, r.Stop(20*time.Second))

	backlog := insertAged(e, "outbox", "Backlog", 10*24*time.Hour, 3000)
	p := harness.StartCommand(t, "prune", append(append(args, pf...), "--older-than", "1d", "--prune-margin", "0s",
		"--prune-batch", "100", "--prune-pause", "0s", "--prune-rate", "3000", "--prune-checkpoint-wait", "60s")...)
	r.Restart()
	// While the router catches up and prune waits, then deletes.
	var during []string
	overlapped := false
	for i := 0; i < 120 && p.Running(); i++ {
		during = append(during, insertAged(e, "outbox", "During", 10*24*time.Hour, 50)...)
		overlapped = overlapped || len(outboxIDs(e, "outbox")) < 1+len(backlog)+len(during)
	}
	require.Equal(t, 0, p.Wait(60*time.Second), "prune: %s", p.Out.String())
	assert.True(t, overlapped, "prune deleted rows while rows were inserted")
	all := sorted(first, backlog, during)
	got = append(got, c.ReadIDsUntil(func(ids []string) bool { return len(ids) >= len(all)-1 }, 60*time.Second)...)
	got = append(got, harness.RecordIDs(c.Quiet(2*time.Second))...)
	assert.Equal(t, all, sorted(got), "every event read exactly once")
	left := len(outboxIDs(e, "outbox"))
	t.Logf("%d events, %d rows left in the table; prune: %s", len(all), left, lastLine(p.Out.String(), "prune: deleted"))
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
	e := harness.NewEnv(t, harness.EnvOpts{})
	pf := grantPrune(e, "shop.outbox")
	args := e.Args("prune4", "--idle-checkpoint", "200ms")
	old := insertAged(e, "outbox", "Old", 10*24*time.Hour, 20)
	fresh := insertAged(e, "outbox", "Fresh", 0, 5)
	harness.StartRouter(t, args...)
	harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(25, 15*time.Second)

	res := pruneRun(t, args, pf, "--older-than", "7d", "--dry-run")
	require.Equal(t, 0, res.Code, res.Stderr)
	assert.Regexp(t, `prune: dry run: 20 rows created before \S+ would be deleted; nothing deleted`, res.Stdout)
	assert.Equal(t, sorted(old, fresh), outboxIDs(e, "outbox"), "nothing deleted")

	// A table without the creation time column: refused before any delete.
	e.Exec("CREATE TABLE outbox_nc (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36) NOT NULL, aggregate_type VARCHAR(255) NOT NULL, " +
		"aggregate_id VARCHAR(255) NOT NULL, event_type VARCHAR(255) NOT NULL, payload LONGTEXT NULL)")
	e.Exec("GRANT SELECT, DELETE ON shop.outbox_nc TO '" + pruneUser + "'@'%'")
	res = pruneRun(t, append(args, "--outbox-table", "shop.outbox_nc"), pf, "--older-than", "7d")
	require.Equal(t, 2, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, `outbox table shop.outbox_nc: no created-at column: column "created_at" does not exist; set --column-created-at`)
	assert.Equal(t, sorted(old, fresh), outboxIDs(e, "outbox"), "nothing deleted in the other table either")
}

// TestPrunePartitionDrop: the partition-dropping idiom of
// docs/retention.md on a RANGE-partitioned outbox table, while the router
// runs: the oldest partition dropped, the newest split to make room; the
// router keeps routing the rows inserted after, each once.
func TestPrunePartitionDrop(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	now := time.Now()
	bound := func(age time.Duration) int64 { return now.Add(-age).Unix() }
	e.Exec(fmt.Sprintf(`CREATE TABLE outbox_p (
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
	args := e.Args("prune5", "--outbox-table", "shop.outbox_p", "--idle-checkpoint", "200ms")
	r := harness.StartRouter(t, args...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	old := insertAged(e, "outbox_p", "Old", 10*24*time.Hour, 10)
	recent := insertAged(e, "outbox_p", "Recent", 2*24*time.Hour, 10)
	fresh := insertAged(e, "outbox_p", "Fresh", 0, 10)
	got := harness.RecordIDs(c.Read(30, 15*time.Second))

	e.Exec("ALTER TABLE outbox_p DROP PARTITION p_old")
	e.Exec(fmt.Sprintf("ALTER TABLE outbox_p REORGANIZE PARTITION p_max INTO (PARTITION p_today VALUES LESS THAN (%d), PARTITION p_max VALUES LESS THAN MAXVALUE)",
		bound(-time.Hour)))
	assert.Equal(t, sorted(recent, fresh), outboxIDs(e, "outbox_p"), "the oldest partition's rows are gone")
	later := insertAged(e, "outbox_p", "Later", 0, 10)
	later = append(later, insertAged(e, "outbox_p", "Later", -2*time.Hour, 10)...)
	got = append(got, c.ReadIDsUntil(func(ids []string) bool { return len(ids) >= 20 }, 15*time.Second)...)
	got = append(got, harness.RecordIDs(c.Quiet(2*time.Second))...)
	assert.Equal(t, sorted(old, recent, fresh, later), sorted(got), "each row routed once, before and after the DDL")
	assert.True(t, r.Running(), "the router runs on after the DDL: %s", harness.Tail(r.Out.String(), 20))
}

// TestPruneInterval: run with --prune-interval prunes inside the router:
// the old rows are deleted once published, the fresh ones kept, rows
// inserted later pruned too, and every row is routed once.
func TestPruneInterval(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	pf := grantPrune(e, "shop.outbox")
	old := insertAged(e, "outbox", "Old", 10*24*time.Hour, 100)
	fresh := insertAged(e, "outbox", "Fresh", 0, 5)
	args := append(e.Args("prune6", "--idle-checkpoint", "200ms", "--prune-interval", "500ms", "--older-than", "7d",
		"--metrics-addr", "127.0.0.1:0"), pf...)
	r := harness.StartRouter(t, args...)
	base := "http://" + metricsAddr(t, r)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	got := harness.RecordIDs(c.Read(105, 15*time.Second))
	harness.Eventually(t, 15*time.Second, "the old rows pruned", func() bool { return len(outboxIDs(e, "outbox")) == len(fresh) })
	assert.Equal(t, sorted(fresh), outboxIDs(e, "outbox"))
	later := insertAged(e, "outbox", "Later", 10*24*time.Hour, 10)
	got = append(got, c.ReadIDsUntil(func(ids []string) bool { return len(ids) >= 10 }, 15*time.Second)...)
	got = append(got, harness.RecordIDs(c.Quiet(time.Second))...)
	assert.Equal(t, sorted(old, fresh, later), sorted(got), "every row routed once")
	harness.Eventually(t, 15*time.Second, "the later old rows pruned", func() bool { return len(outboxIDs(e, "outbox")) == len(fresh) })
	assert.True(t, r.Running(), "the router runs on")
	// A prune's rows are counted once it has ended.
	harness.Eventually(t, 15*time.Second, "the pruned rows counted", func() bool {
		return metricValue(t, base, "binlog_router_prune_rows_deleted_total") == float64(len(old)+len(later))
	})
	assert.Positive(t, metricValue(t, base, `binlog_router_prune_runs_total{result="ok"}`))
	assert.Positive(t, metricValue(t, base, "binlog_router_prune_cutoff_timestamp_seconds"))
	assert.Contains(t, r.Out.String(), `"component":"prune"`)
	assert.Regexp(t, `"message":"prune done"`, r.Out.String())
}

// TestPruneIntervalNeedsItsFlags: run refuses --prune-interval without
// --older-than and --prune-mysql-user, naming both.
func TestPruneIntervalNeedsItsFlags(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	res := harness.RunCLI(t, append([]string{"run"}, e.Args("prune7", "--prune-interval", "1h")...)...)
	assert.Equal(t, 2, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, "--older-than")
	assert.Contains(t, res.Stderr, "--prune-mysql-user")
}

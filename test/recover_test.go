package test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/test/harness"
)

// recoverRun runs `binlog-router recover` with the router's flags args
// and extra.
func recoverRun(t testing.TB, args []string, extra ...string) harness.CLIResult {
	t.Helper()
	return harness.RunCLI(t, append(append([]string{"recover"}, args...), extra...)...)
}

var recoverTotalRE = regexp.MustCompile(`recover: (\d+) rows in the window, (\d+) already in Kafka \(\d+ ids read from \d+ records\), (\d+) (published|would be published), snapshot at "([^"]*)"`)

// recoverTotals are the counts of recover's summary line: rows in the
// window, already in Kafka, published (or to be), and the snapshot's
// GTID set.
func recoverTotals(t testing.TB, res harness.CLIResult) (window, known, published int, snapshot string) {
	t.Helper()
	m := recoverTotalRE.FindStringSubmatch(res.Stdout)
	require.NotNil(t, m, "recover's summary line (exit %d):\n%s\n%s", res.Code, res.Stdout, harness.Tail(res.Stderr, 3000))
	n := func(s string) int {
		v, err := strconv.Atoi(s)
		require.NoError(t, err)
		return v
	}
	return n(m[1]), n(m[2]), n(m[3]), m[5]
}

// idsCreatedSince are the event ids of the outbox rows created at or
// after the instant of a TIMESTAMP value given as Unix seconds.
func idsCreatedSince(e *harness.Env, unix string) map[string]bool {
	e.T.Helper()
	rows, err := e.DB.Query("SELECT event_id FROM outbox WHERE created_at >= FROM_UNIXTIME(?)", unix)
	require.NoError(e.T, err)
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		require.NoError(e.T, rows.Scan(&id))
		out[id] = true
	}
	require.NoError(e.T, rows.Err())
	return out
}

// purgeAll keeps only a new binlog file: the router, stopped, cannot
// resume from its checkpoint.
func purgeAll(e *harness.Env) {
	e.T.Helper()
	e.Exec("FLUSH BINARY LOGS")
	newest := e.NewestBinlog()
	e.WaitBinlogDumpsGone()
	e.PurgeBinlogsTo(newest)
}

// TestRecoverPurgedGap: the router publishes, stops; rows are committed
// and their binlog purged (run exits 3). recover --since a moment inside
// what was published counts in a dry run, then publishes only the rows
// Kafka lacks and stores the snapshot's position; run streams on from
// there. A read_committed consumer reads every event once, and a
// recovered record is what run gives a row: topic, key, partition,
// header keys, timestamp from created_at.
func TestRecoverPurgedGap(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "recover"
	// A stopped router is told from a running one by its checkpoint's
	// age, twice --idle-checkpoint: short here.
	args := e.Args(name, "--idle-checkpoint", "1s")
	r := harness.StartRouter(t, args...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	w := harness.NewWriter(e.DB, rng, "agg", 8, 0)
	ctx := t.Context()
	for range 20 {
		require.NoError(t, w.Tx(ctx, 1+rng.IntN(5)))
	}
	first := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, first, time.Minute)
	require.Equal(t, 0, r.Stop(30*time.Second))

	// The window starts at the creation time of a row in the middle of
	// what was published: those before are outside it, those after are
	// skipped as already in Kafka.
	var since string
	require.NoError(t, e.DB.QueryRow("SELECT UNIX_TIMESTAMP(created_at) FROM outbox ORDER BY id LIMIT 1 OFFSET ?", len(first)/2).Scan(&since))
	for range 30 {
		require.NoError(t, w.Tx(ctx, 1+rng.IntN(5)))
	}
	gap := harness.CommittedRows(t, e.DB)
	purgeAll(e)
	r.Restart()
	require.Equal(t, 3, r.Wait(time.Minute), "run cannot resume: its binlog is purged")

	window := idsCreatedSince(e, since)
	wantKnown := 0
	for id := range window {
		if _, ok := first[id]; ok {
			wantKnown++
		}
	}
	require.Positive(t, wantKnown, "the window overlaps what was published")
	sinceArg := unixMicros(t, since).UTC().Format(time.RFC3339Nano)

	dry := recoverRun(t, args, "--since", sinceArg, "--dry-run")
	require.Equal(t, 0, dry.Code, "dry run: %s", harness.Tail(dry.Stderr, 3000))
	n, known, pub, _ := recoverTotals(t, dry)
	assert.Equal(t, len(window), n, "rows in the window")
	assert.Equal(t, wantKnown, known, "rows already in Kafka")
	assert.Equal(t, len(window)-wantKnown, pub, "rows to publish")
	assert.Contains(t, dry.Stdout, "first ids: ")
	assert.NotEqual(t, e.GTIDPos(), e.CheckpointSet(name), "the dry run stored no checkpoint")

	// --since-checkpoint: from the checkpoint's time less the margin (5
	// minutes: every row of the test).
	dry = recoverRun(t, args, "--since-checkpoint", "--dry-run")
	require.Equal(t, 0, dry.Code, "dry run: %s", harness.Tail(dry.Stderr, 3000))
	n, known, pub, _ = recoverTotals(t, dry)
	assert.Equal(t, []int{len(gap), len(first), len(gap) - len(first)}, []int{n, known, pub}, "--since-checkpoint: rows, known, to publish")

	cp := e.MustCheckpoint(name)
	time.Sleep(time.Until(cp.Time.Add(2500 * time.Millisecond)))
	res := recoverRun(t, args, "--since", sinceArg)
	require.Equal(t, 0, res.Code, "recover: %s", harness.Tail(res.Stderr, 3000))
	n, known, pub, snap := recoverTotals(t, res)
	t.Logf("recover: %d rows in the window, %d already in Kafka, %d published, snapshot %s", n, known, pub, snap)
	assert.Equal(t, len(window)-wantKnown, pub)
	assert.Equal(t, e.GTIDPos(), snap, "nothing was committed during the recovery: the snapshot is the server's position")
	assert.Equal(t, snap, e.CheckpointSet(name), "the checkpoint is the snapshot's position")

	// A second run (after a crash, say) publishes nothing twice.
	cp = e.MustCheckpoint(name)
	time.Sleep(time.Until(cp.Time.Add(2500 * time.Millisecond)))
	again := recoverRun(t, args, "--since", sinceArg)
	require.Equal(t, 0, again.Code, "recover again: %s", harness.Tail(again.Stderr, 3000))
	n, known, pub, _ = recoverTotals(t, again)
	assert.Equal(t, []int{len(window), len(window), 0}, []int{n, known, pub}, "recover again: rows, known, published")

	// run streams on from the recovery's checkpoint.
	r.Restart()
	for range 20 {
		require.NoError(t, w.Tx(ctx, 1+rng.IntN(5)))
	}
	all := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, all, time.Minute)
	require.Equal(t, 0, r.Stop(30*time.Second))
	v := harness.CheckDelivery(t, all, col.Settle(t, time.Second), nil)
	t.Logf("%s (%d before the stop, %d in the purged gap, %d after)", v, len(first), len(gap)-len(first), len(all)-len(gap))

	// A recovered record is what run gives a row.
	recs := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(len(all), 30*time.Second)
	byID := recordsByID(t, recs)
	partitions := map[string]int{}
	topics, err := e.Admin().ListTopics(ctx)
	require.NoError(t, err)
	for _, td := range topics {
		partitions[td.Topic] = len(td.Partitions)
	}
	var recovered, streamed []*kgo.Record
	for id, rec := range byID {
		if _, published := first[id]; !published && gap[id] != (harness.OutboxRow{}) {
			recovered = append(recovered, rec)
		} else {
			streamed = append(streamed, rec)
		}
	}
	require.Len(t, recovered, len(gap)-len(first))
	headerKeys := func(r *kgo.Record) string {
		var ks []string
		for _, h := range r.Headers {
			ks = append(ks, h.Key)
		}
		return strings.Join(ks, ",")
	}
	want := headerKeys(streamed[0])
	for _, rec := range recovered {
		id := harness.RecordHeader(rec, "id")
		row := gap[id]
		assert.Equal(t, want, headerKeys(rec), "header keys of %s", id)
		assert.Equal(t, "", harness.RecordHeader(rec, route.HeaderBinlogGTID), "a recovered record names no binlog transaction")
		assert.Equal(t, row.Agg, string(rec.Key))
		assert.Equal(t, e.Prefix+"."+row.Type, rec.Topic)
		assert.Equal(t, int32(route.PartitionFor(rec.Key, partitions[rec.Topic])), rec.Partition, "murmur2 partition of %s", id)
		var p struct{ Seq int }
		require.NoError(t, json.Unmarshal(rec.Value, &p))
		assert.Equal(t, row.Seq, p.Seq)
		var created string
		require.NoError(t, e.DB.QueryRow("SELECT UNIX_TIMESTAMP(created_at) FROM outbox WHERE event_id = ?", id).Scan(&created))
		assert.Equal(t, created[:strings.Index(created, ".")+4], fmt.Sprintf("%d.%03d", rec.Timestamp.Unix(), rec.Timestamp.Nanosecond()/1e6), "timestamp of %s is its created_at", id)
	}
	for _, rec := range streamed {
		assert.Equal(t, int32(route.PartitionFor(rec.Key, partitions[rec.Topic])), rec.Partition)
	}
}

// TestRecoverWhere: a polling relay's table (a status column) is handed
// over with recover --where "status <> 'SENT'": the pending rows are
// published, except one the poller had published without marking it,
// which Kafka already holds; run streams the rows after. Each event is
// read once.
func TestRecoverWhere(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	const name = "recover-where"
	args := e.Args(name)
	e.Exec("ALTER TABLE outbox ADD COLUMN status VARCHAR(8) NOT NULL DEFAULT 'NEW'")
	ctx := t.Context()
	type row struct {
		id, agg, typ string
		seq          int
	}
	insert := func(status string, seq int) row {
		r := row{id: uuid.NewString(), agg: fmt.Sprintf("agg-%d", seq%3), typ: "Created", seq: seq}
		_, err := e.DB.ExecContext(ctx, "INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload, status) VALUES (?, 'order', ?, ?, ?, ?)",
			r.id, r.agg, r.typ, fmt.Sprintf(`{"seq":%d}`, seq), status)
		require.NoError(t, err)
		return r
	}
	var sent, pending []row
	for i := range 10 {
		sent = append(sent, insert("SENT", i))
	}
	for i := 10; i < 25; i++ {
		pending = append(pending, insert("NEW", i))
	}
	// The poller published the first pending row and stopped before
	// marking it SENT.
	_, err := e.Admin().CreateTopic(ctx, 3, 1, nil, e.Prefix+".Created")
	require.NoError(t, err)
	cl := e.KafkaClient(kgo.DefaultProduceTopic(e.Prefix + ".Created"))
	p := pending[0]
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Key: []byte(p.agg), Value: []byte(fmt.Sprintf(`{"seq":%d}`, p.seq)),
		Headers: []kgo.RecordHeader{{Key: "id", Value: []byte(p.id)}}}).FirstErr())

	res := recoverRun(t, args, "--where", "status <> 'SENT'")
	require.Equal(t, 0, res.Code, "recover: %s", harness.Tail(res.Stderr, 3000))
	n, known, pub, snap := recoverTotals(t, res)
	assert.Equal(t, len(pending), n, "the pending rows")
	assert.Equal(t, 1, known, "the row the poller published")
	assert.Equal(t, len(pending)-1, pub)
	assert.Equal(t, snap, e.CheckpointSet(name))

	r := harness.StartRouter(t, args...)
	var later []row
	for i := 25; i < 35; i++ {
		later = append(later, insert("NEW", i))
	}
	want := map[string]bool{}
	for _, x := range append(append([]row{}, pending...), later...) {
		want[x.id] = true
	}
	cons := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	recs, err := cons.ReadUntil(func(got []*kgo.Record) bool {
		have := 0
		for _, id := range harness.RecordIDs(got) {
			if want[id] {
				have++
			}
		}
		return have >= len(want)
	}, 30*time.Second)
	require.NoError(t, err)
	recs = append(recs, cons.Quiet(time.Second)...)
	require.Equal(t, 0, r.Stop(30*time.Second))
	ids := harness.RecordIDs(recs)
	sort.Strings(ids)
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	for id := range want {
		assert.Equal(t, 1, seen[id], "event %s read once", id)
	}
	for _, s := range sent {
		assert.Zero(t, seen[s.id], "a row the poller marked SENT is not recovered")
	}
	assert.Len(t, ids, len(want), "no other record")
	t.Logf("%d pending rows (1 already in Kafka), %d after the hand-over, %d SENT: %d records read", len(pending), len(later), len(sent), len(ids))
}

// TestRecoverRefusesTable: a table recover cannot read in chunks (no
// primary key of one column), or a time window on a table without a
// creation time column, is refused by name (exit 2) before anything is
// read or published.
func TestRecoverRefusesTable(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec("CREATE TABLE outbox2 (event_id CHAR(36) NOT NULL, aggregate_type VARCHAR(255) NOT NULL, aggregate_id VARCHAR(255) NOT NULL, event_type VARCHAR(255) NOT NULL, payload LONGTEXT, created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), PRIMARY KEY (event_id, aggregate_id))")
	e.Exec("CREATE TABLE outbox3 (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36) NOT NULL, aggregate_type VARCHAR(255) NOT NULL, aggregate_id VARCHAR(255) NOT NULL, event_type VARCHAR(255) NOT NULL, payload LONGTEXT)")
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)

	res := recoverRun(t, harness.ArgsWith(e.Args("refuse"), "--outbox-table", e.DBName+".outbox2"), "--since", since)
	assert.Equal(t, 2, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, "2 primary key columns")

	res = recoverRun(t, harness.ArgsWith(e.Args("refuse"), "--outbox-table", e.DBName+".outbox3"), "--since", since)
	assert.Equal(t, 2, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, "no creation time column")

	res = recoverRun(t, e.Args("refuse"))
	assert.Equal(t, 2, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, "recover needs a window")
	_, err := e.Checkpoint("refuse")
	assert.Error(t, err, "no checkpoint stored (nor a checkpoint topic)")
}

package test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestRecoverOrderCreatedAt: a table keyed by random UUIDs (v4, as
// Debezium's outbox layout) with a TIMESTAMP(6) created_at receives the
// events of a few aggregates, one transaction each, over time; its
// binlog is purged. recover (--recover-order auto) reads it in
// created_at order, says so and why, and a read_committed consumer reads
// each aggregate's events in the order they were inserted. The same rows
// recovered in key order into other topics come in another order for
// some aggregate: the order the key gives is random, so the first check
// can fail. --recover-order created-at on a table without created_at is
// refused, naming --column-created-at.
func TestRecoverOrderCreatedAt(t *testing.T) {
	const aggregates, rows, chunk = 4, 60, "7"
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec(`CREATE TABLE outbox_v4 (event_id CHAR(36) NOT NULL PRIMARY KEY, aggregate_type VARCHAR(255) NOT NULL,
		aggregate_id VARCHAR(255) NOT NULL, event_type VARCHAR(255) NOT NULL, payload LONGTEXT,
		created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6), INDEX (created_at))`)
	next := map[string]int{}
	for range rows {
		agg := fmt.Sprintf("agg-%d", rng.IntN(aggregates))
		next[agg]++
		e.Exec("INSERT INTO outbox_v4 (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, 'order', ?, 'Changed', ?)",
			uuid.NewString(), agg, fmt.Sprintf(`{"seq":%d}`, next[agg]))
	}
	// created_at increases with each insert, and the key order is not
	// the insert order of some aggregate.
	seqs := func(q string) map[string][]int {
		out := map[string][]int{}
		r, err := e.DB.Query(q)
		require.NoError(t, err)
		defer r.Close()
		for r.Next() {
			var agg, payload string
			require.NoError(t, r.Scan(&agg, &payload))
			var p struct{ Seq int }
			require.NoError(t, json.Unmarshal([]byte(payload), &p))
			out[agg] = append(out[agg], p.Seq)
		}
		require.NoError(t, r.Err())
		return out
	}
	var distinct int
	require.NoError(t, e.DB.QueryRow("SELECT COUNT(DISTINCT created_at) FROM outbox_v4").Scan(&distinct))
	require.Equal(t, rows, distinct, "one created_at per insert")
	require.True(t, inInsertOrder(seqs("SELECT aggregate_id, payload FROM outbox_v4 ORDER BY created_at")), "created_at order is insert order")
	require.False(t, inInsertOrder(seqs("SELECT aggregate_id, payload FROM outbox_v4 ORDER BY event_id")), "key order is not insert order for some aggregate")
	purgeAll(e)

	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	args := harness.ArgsWith(e.Args("recover-order"), "--outbox-table", e.DBName+".outbox_v4")
	dry := recoverRun(t, args, "--since", since, "--recover-chunk", chunk, "--dry-run")
	require.Equal(t, 0, dry.Code, "dry run: %s", harness.Tail(dry.Stderr, 3000))
	orderLine := `recover: table shop.outbox_v4 read in created-at order: primary key "event_id" is not AUTO_INCREMENT`
	assert.Contains(t, dry.Stdout, orderLine, "the dry run names the order and why")

	res := recoverRun(t, args, "--since", since, "--recover-chunk", chunk)
	require.Equal(t, 0, res.Code, "recover: %s", harness.Tail(res.Stderr, 3000))
	assert.Contains(t, res.Stdout, orderLine)
	assert.NotContains(t, res.Stderr, `"level":"warn"`, "an index on created_at, microseconds: no warning")
	n, known, pub, _ := recoverTotals(t, res)
	require.Equal(t, []int{rows, 0, rows}, []int{n, known, pub}, "rows, known, published")
	got := consumedSeqs(t, harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(rows, 30*time.Second))
	assert.True(t, inInsertOrder(got), "each aggregate's events in insert order: %v", got)
	t.Logf("created-at order: %v", got)

	// The same rows in key order, into topics of their own.
	keyPrefix := e.Prefix + "k"
	keyArgs := harness.ArgsWith(harness.ArgsWith(e.Args("recover-order-key"), "--outbox-table", e.DBName+".outbox_v4"), "--topic-template", keyPrefix+".{event_type}")
	res = recoverRun(t, keyArgs, "--since", since, "--recover-chunk", chunk, "--recover-order", "key")
	require.Equal(t, 0, res.Code, "recover in key order: %s", harness.Tail(res.Stderr, 3000))
	assert.Contains(t, res.Stdout, "recover: table shop.outbox_v4 read in key order: --recover-order key")
	n, known, pub, _ = recoverTotals(t, res)
	require.Equal(t, []int{rows, 0, rows}, []int{n, known, pub}, "key order: rows, known, published")
	byKey := consumedSeqs(t, harness.NewConsumer(t, e.Kafka.Brokers, "^"+keyPrefix+`\..*`).Read(rows, 30*time.Second))
	assert.False(t, inInsertOrder(byKey), "in key order some aggregate's events are out of insert order: %v", byKey)
	assert.Equal(t, seqs("SELECT aggregate_id, payload FROM outbox_v4 ORDER BY event_id"), byKey, "key order is what the consumer reads")

	// created-at order needs a creation time column.
	e.Exec(`CREATE TABLE outbox_nc (event_id CHAR(36) NOT NULL PRIMARY KEY, aggregate_type VARCHAR(255) NOT NULL,
		aggregate_id VARCHAR(255) NOT NULL, event_type VARCHAR(255) NOT NULL, payload LONGTEXT)`)
	res = recoverRun(t, harness.ArgsWith(e.Args("recover-order-nc"), "--outbox-table", e.DBName+".outbox_nc"), "--where", "TRUE", "--recover-order", "created-at", "--dry-run")
	assert.Equal(t, 2, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, "--recover-order created-at needs a creation time column")
	assert.Contains(t, res.Stderr, "--column-created-at")
}

// consumedSeqs are the "seq" payload fields of recs per record key, in
// the order read (one key is one partition: its order is the produce
// order).
func consumedSeqs(t testing.TB, recs []*kgo.Record) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	for _, r := range recs {
		var p struct{ Seq int }
		require.NoError(t, json.Unmarshal(r.Value, &p), string(r.Value))
		out[string(r.Key)] = append(out[string(r.Key)], p.Seq)
	}
	return out
}

// inInsertOrder reports whether every aggregate's sequence numbers are
// 1, 2, 3, ... in that order.
func inInsertOrder(seqs map[string][]int) bool {
	for _, s := range seqs {
		want := make([]int, len(s))
		for i := range want {
			want[i] = i + 1
		}
		if !slices.Equal(s, want) {
			return false
		}
	}
	return len(seqs) > 0
}

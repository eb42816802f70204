package test

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestRecoverDeadLetters: a row of the window that cannot be routed
// stops a recovery by default, naming the row's table and the fix, and
// commits nothing after it; with --on-invalid dead-letter it goes to the
// dead-letter topic while the other rows are published, and a second
// recovery diverts it no second time.
func TestRecoverDeadLetters(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := e.Args("recover-dlq")
	good1 := harness.NewEvent("g1", "Good", `{"ok":1}`)
	bad := harness.Event{ID: "6b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5c", AggType: "order", AggID: "", Type: "Bad", Payload: ptr(`{}`)}
	good2 := harness.NewEvent("g2", "Good", `{"ok":2}`)
	e.InsertTx(good1)
	e.InsertTx(bad)
	e.InsertTx(good2)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)

	res := recoverRun(t, args, "--since", since)
	require.Equal(t, 1, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, "cannot be routed")
	assert.Contains(t, res.Stderr, "--on-invalid=dead-letter", "the error names the fix")
	_, err := e.Checkpoint("recover-dlq")
	assert.Error(t, err, "no checkpoint stored")

	dlq := e.Prefix + ".dlq"
	res = recoverRun(t, args, "--since", since, "--on-invalid", "dead-letter", "--dead-letter-topic", dlq)
	require.Equal(t, 0, res.Code, res.Stderr)
	n, known, pub, snap := recoverTotals(t, res)
	assert.Equal(t, []int{3, 0, 3}, []int{n, known, pub}, "rows, known, published (the dead letter among them)")
	assert.Contains(t, res.Stdout, "topic "+dlq+": 1 rows in the window, 0 already in Kafka, 1 published")
	assert.Equal(t, snap, e.CheckpointSet("recover-dlq"))

	// Again (--force: the checkpoint just written looks like a running
	// router's): the dead letter is known by its id.
	res = recoverRun(t, args, "--since", since, "--on-invalid", "dead-letter", "--dead-letter-topic", dlq, "--force")
	require.Equal(t, 0, res.Code, res.Stderr)
	n, known, pub, _ = recoverTotals(t, res)
	assert.Equal(t, []int{3, 3, 0}, []int{n, known, pub}, "again: rows, known, published")

	good := harness.NewConsumer(t, e.Kafka.Brokers, `^`+regexp.QuoteMeta(e.Prefix)+`\.Good$`)
	got := good.Read(2, 60*time.Second)
	got = append(got, good.Quiet(500*time.Millisecond)...)
	assert.ElementsMatch(t, []string{good1.ID, good2.ID}, harness.RecordIDs(got), "the good rows, once each")
	d := harness.NewConsumer(t, e.Kafka.Brokers, "^"+regexp.QuoteMeta(dlq)+"$")
	letters := d.Read(1, 60*time.Second)
	letters = append(letters, d.Quiet(500*time.Millisecond)...)
	require.Len(t, letters, 1, "one dead letter")
	kind, _ := harness.Header(letters[0], "error_kind")
	id, _ := harness.Header(letters[0], "id")
	assert.Equal(t, "null_aggregate_id", kind)
	assert.Equal(t, bad.ID, id)
}

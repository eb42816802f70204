package test

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecoverDeadLetters: a row of the window that cannot be routed
// stops a recovery by default, naming the row's table and the fix, and
// commits nothing after it; with --on-invalid dead-letter it goes to the
// dead-letter topic while the other rows are published, and a second
// recovery diverts it no second time.
func TestRecoverDeadLetters(t *testing.T) {
	e := newEnv(t, envOpts{})
	args := e.args("recover-dlq")
	good1 := newEvent("g1", "Good", `{"ok":1}`)
	bad := event{ID: "6b0c1b4e-7a35-4c89-9a0b-1c1d2e3f4a5c", AggType: "order", AggID: "", Type: "Bad", Payload: ptr(`{}`)}
	good2 := newEvent("g2", "Good", `{"ok":2}`)
	e.insertTx(good1)
	e.insertTx(bad)
	e.insertTx(good2)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)

	res := recoverRun(t, args, "--since", since)
	require.Equal(t, 1, res.code, res.stderr)
	assert.Contains(t, res.stderr, "cannot be routed")
	assert.Contains(t, res.stderr, "--on-invalid=dead-letter", "the error names the fix")
	_, err := e.checkpoint("recover-dlq")
	assert.Error(t, err, "no checkpoint stored")

	dlq := e.prefix + ".dlq"
	res = recoverRun(t, args, "--since", since, "--on-invalid", "dead-letter", "--dead-letter-topic", dlq)
	require.Equal(t, 0, res.code, res.stderr)
	n, known, pub, snap := recoverTotals(t, res)
	assert.Equal(t, []int{3, 0, 3}, []int{n, known, pub}, "rows, known, published (the dead letter among them)")
	assert.Contains(t, res.stdout, "topic "+dlq+": 1 rows in the window, 0 already in Kafka, 1 published")
	assert.Equal(t, snap, e.checkpointSet("recover-dlq"))

	// Again (--force: the checkpoint just written looks like a running
	// router's): the dead letter is known by its id.
	res = recoverRun(t, args, "--since", since, "--on-invalid", "dead-letter", "--dead-letter-topic", dlq, "--force")
	require.Equal(t, 0, res.code, res.stderr)
	n, known, pub, _ = recoverTotals(t, res)
	assert.Equal(t, []int{3, 3, 0}, []int{n, known, pub}, "again: rows, known, published")

	good := newConsumer(t, e.kafka.Brokers, `^`+regexp.QuoteMeta(e.prefix)+`\.Good$`)
	got := good.read(2, 60*time.Second)
	got = append(got, good.quiet(500*time.Millisecond)...)
	assert.ElementsMatch(t, []string{good1.ID, good2.ID}, recordIDs(got), "the good rows, once each")
	d := newConsumer(t, e.kafka.Brokers, "^"+regexp.QuoteMeta(dlq)+"$")
	letters := d.read(1, 60*time.Second)
	letters = append(letters, d.quiet(500*time.Millisecond)...)
	require.Len(t, letters, 1, "one dead letter")
	kind, _ := header(letters[0], "error_kind")
	id, _ := header(letters[0], "id")
	assert.Equal(t, "null_aggregate_id", kind)
	assert.Equal(t, bad.ID, id)
}

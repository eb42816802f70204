package test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/test/harness"
)

// dbzTopics is the outbox topics of DbzLoad's aggregate types.
var dbzTopics = []string{"outbox.event.order", "outbox.event.customer", "outbox.event.payment"}

// TestDebeziumCutover replaces a running Debezium with the router the way
// the migration guide (docs/debezium-migration.md) does, while the application inserts outbox
// rows all along: Debezium publishes, is stopped (PUT
// /connectors/outbox/stop), its committed offset is read from Kafka
// Connect's REST API as a user copies it, `checkpoint set
// --from-debezium-offset` stores it, and the router runs on. A
// read_committed consumer reads every row; the only duplicates are rows
// Debezium published after its committed offset (none: a stopped connector
// commits the offset of the last record it published). Then the way back:
// the router stops, `checkpoint show --as-debezium-offset` gives the
// offset, PATCH /connectors/outbox/offsets stores it and Debezium resumes,
// again with nothing lost and nothing repeated.
func TestDebeziumCutover(t *testing.T) {
	w := harness.NewDebeziumWorld(t, nil)
	w.CreateTopics(dbzTopics...)
	name, config := w.ConnectorConfig("outbox-connector.json")
	w.StartConnector(name, config)
	col := harness.NewCollector(t, w.Kafka.Brokers, `^outbox\.event\..*`)
	load := harness.StartDbzLoad(t, w.DB, 200)
	ctx := ctxTimeout(t, 10*time.Minute)

	// Debezium publishes while rows come in, then stops.
	harness.Eventually(t, 3*time.Minute, "debezium publishes 300 rows", func() bool { return col.Distinct() >= 300 })
	require.NoError(t, w.Connect.StopConnector(ctx, name))
	published := readAllPublished(w, col)
	offsets, err := w.Connect.OffsetsText(ctx, name)
	require.NoError(t, err)
	t.Logf("debezium stopped after publishing %d records; GET /connectors/%s/offsets: %s", len(published), name, offsets)

	// The router takes over from Debezium's committed offset.
	args := w.RouterArgs("cutover")
	set := harness.RunCLI(t, append(append([]string{"checkpoint", "set"}, args...), "--from-debezium-offset", offsets)...)
	require.Equal(t, 0, set.Code, "checkpoint set: %s", set.Stderr)
	t.Logf("checkpoint set: %s", strings.TrimSpace(set.Stderr))
	r := harness.StartRouter(t, args...)
	before := col.Distinct()
	harness.Eventually(t, 3*time.Minute, "the router publishes 300 new rows", func() bool { return col.Distinct() >= before+300 || !r.Running() })
	r.MustRun("cut-over")

	// ... and hands back to Debezium.
	require.Equal(t, 0, r.Stop(30*time.Second))
	show := harness.RunCLI(t, append(append([]string{"checkpoint", "show"}, args...), "--as-debezium-offset")...)
	require.Equal(t, 0, show.Code, "checkpoint show: %s", show.Stderr)
	patch := `{"offsets":[{"partition":{"server":"` + config["topic.prefix"] + `"},"offset":` + strings.TrimSpace(show.Stdout) + `}]}`
	t.Logf("router stopped; PATCH /connectors/%s/offsets %s", name, patch)
	require.NoError(t, w.Connect.AlterOffsetsText(ctx, name, patch))
	require.NoError(t, w.Connect.ResumeConnector(ctx, name))
	before = col.Distinct()
	harness.Eventually(t, 3*time.Minute, "debezium publishes 300 new rows", func() bool { return col.Distinct() >= before+300 })

	offset, err := checkpoint.ParseDebeziumOffset(offsets)
	require.NoError(t, err)
	rows, txns, allowed, v := cutoverDelivery(t, load, col, offset, published)
	t.Logf("cut-over: %d rows committed in %d transactions; debezium published %d before it stopped, %d of them after its committed offset; %s",
		rows, txns, len(published), len(allowed), v)
}

// cutoverDelivery stops the load, waits until the collector has read every
// row it committed, and judges the delivery: the rows Debezium published
// after its committed offset may come twice. It returns the rows and
// transactions committed, those rows, and the verdict.
func cutoverDelivery(t *testing.T, load *harness.DbzLoad, col *harness.Collector, offset checkpoint.DebeziumOffset, published map[string]bool) (rows, txns int, allowed map[string]bool, v harness.Verdict) {
	t.Helper()
	load.Stop()
	committed, err := load.Committed()
	require.NoError(t, err, "the load")
	want := map[string]harness.OutboxRow{}
	for _, txn := range committed {
		for _, row := range txn.Rows {
			want[row.ID] = row
		}
	}
	col.WaitAll(t, want, 3*time.Minute)
	got := col.Settle(t, 3*time.Second)
	allowed = publishedAfter(t, committed, offset, published)
	v = harness.CheckDelivery(t, want, got, func(d harness.Delivered) bool { return allowed[d.ID] })
	return len(want), len(committed), allowed, v
}

// readAllPublished waits until the collector has read every record now in
// the outbox topics (their end offsets) and returns the ids read.
func readAllPublished(w *harness.DbzWorld, col *harness.Collector) map[string]bool {
	w.T.Helper()
	adm := harness.NewAdmin(w.T, w.Kafka.Brokers)
	ends, err := adm.ListEndOffsets(context.Background(), dbzTopics...)
	require.NoError(w.T, err)
	harness.Eventually(w.T, time.Minute, "reading the topics to their end", func() bool {
		col.Mu.Lock()
		defer col.Mu.Unlock()
		next := map[string]int64{}
		for _, d := range col.Recs {
			k := fmt.Sprintf("%s/%d", d.Topic, d.Partition)
			next[k] = max(next[k], d.Offset+1)
		}
		done := true
		ends.Each(func(o kadm.ListedOffset) {
			if next[fmt.Sprintf("%s/%d", o.Topic, o.Partition)] < o.Offset {
				done = false
			}
		})
		return done
	})
	col.Mu.Lock()
	defer col.Mu.Unlock()
	ids := map[string]bool{}
	for _, d := range col.Recs {
		ids[d.ID] = true
	}
	return ids
}

// publishedAfter returns the rows of published that lie after Debezium's
// offset o in binlog order: the rows a router starting at o publishes
// again. The transactions are DbzLoad's, in commit order, so their event
// layout is known: GTID, TABLE_MAP and WRITE_ROWS of the business row,
// then per outbox INSERT a TABLE_MAP and a WRITE_ROWS; o's event counts
// from the GTID event and its row counts rows of the event after those.
func publishedAfter(t *testing.T, txns []harness.DbzTxn, o checkpoint.DebeziumOffset, published map[string]bool) map[string]bool {
	t.Helper()
	_, upTo, ok := harness.ParseGTID(o.GTIDs)
	require.True(t, ok, "offset gtids %q", o.GTIDs)
	after := map[string]bool{}
	inOffsetTxn := false
	for _, txn := range txns {
		_, seq, ok := harness.ParseGTID(txn.GTID)
		require.True(t, ok, txn.GTID)
		done := 0
		switch {
		case seq <= upTo:
			continue
		case !inOffsetTxn:
			inOffsetTxn = true
			done = dbzRowsDone(txn, o.Event, o.Row)
		}
		for _, row := range txn.Rows[done:] {
			if published[row.ID] {
				after[row.ID] = true
			}
		}
	}
	return after
}

// dbzRowsDone counts the outbox rows of txn in its first events events
// and the first rows rows of the event after them.
func dbzRowsDone(txn harness.DbzTxn, events, rows int64) int {
	index := int64(3) // GTID, TABLE_MAP and WRITE_ROWS of the business row
	done := 0
	step := func(n int) {
		index += 2 // TABLE_MAP, WRITE_ROWS
		switch {
		case index <= events:
			done += n
		case index == events+1:
			done += min(n, int(rows))
		}
	}
	if txn.MultiRow {
		step(len(txn.Rows))
	} else {
		for range txn.Rows {
			step(1)
		}
	}
	return done
}

// TestDebeziumCutoverAfterCrash takes over from a Debezium whose worker
// died (SIGKILL) while it published a large transaction: its committed
// offset, read from the Connect offsets topic with kcat as the migration
// guide says, lies inside that transaction, behind what it had published. The
// router republishes exactly the rows Debezium published after that
// offset (duplicates with the same id) and loses none. The worker commits
// offsets every second here, so that one lands inside the transaction.
func TestDebeziumCutoverAfterCrash(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	require.NoError(t, err, "kcat not installed (apt-get install kcat)")
	w := harness.NewDebeziumWorld(t, map[string]string{"offset.flush.interval.ms": "1000"})
	w.CreateTopics(dbzTopics...)
	name, config := w.ConnectorConfig("outbox-connector.json")
	w.StartConnector(name, config)
	col := harness.NewCollector(t, w.Kafka.Brokers, `^outbox\.event\..*`)
	load := harness.StartDbzLoad(t, w.DB, 100)
	ctx := ctxTimeout(t, 10*time.Minute)
	harness.Eventually(t, 3*time.Minute, "debezium publishes 100 rows", func() bool { return col.Distinct() >= 100 })

	// A large transaction; the worker is killed once its committed offset
	// is inside it (another one is tried if Debezium got through first).
	var inside bool
	for attempt := 1; attempt <= 3 && !inside; attempt++ {
		big, err := load.BigTx(ctx, 20000)
		require.NoError(t, err)
		_ = harness.Poll(2*time.Minute, func() bool {
			o, err := w.Connect.Offsets(ctx, name)
			if err != nil || len(o) != 1 {
				return false
			}
			off, err := checkpoint.ParseDebeziumOffset(string(o[0].Offset))
			if err != nil {
				return false
			}
			_, seq, _ := harness.ParseGTID(off.GTIDs)
			_, bigSeq, _ := harness.ParseGTID(big.GTID)
			// Inside the large transaction: the offset's gtids end just
			// before it (the load may have committed one of its own between
			// reading the position and the large transaction's start).
			inside = seq == bigSeq-1 && off.InTransaction()
			return inside || seq >= bigSeq
		})
		t.Logf("attempt %d: transaction %s of %d rows; committed offset inside it: %v", attempt, big.GTID, len(big.Rows), inside)
	}
	w.Connect.Kill()
	require.True(t, inside, "no committed offset inside a large transaction in 3 attempts")
	published := readAllPublished(w, col)

	// The committed offset, as kcat prints the offsets topic's records.
	out, err := exec.Command(kcat, "-C", "-b", strings.Join(w.Kafka.Brokers, ","), "-t", "connect-offsets",
		"-e", "-q", "-f", "%k %s\n").Output()
	require.NoError(t, err, "kcat")
	var last string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, `["outbox",{"server":"shop"}] `) {
			last = line
		}
	}
	require.NotEmpty(t, last, "no offset of connector outbox in connect-offsets:\n%s", out)
	t.Logf("debezium killed after publishing %d records; last connect-offsets record: %s", len(published), last)

	args := w.RouterArgs("crashover")
	set := harness.RunCLI(t, append(append([]string{"checkpoint", "set"}, args...), "--from-debezium-offset", last)...)
	require.Equal(t, 0, set.Code, "checkpoint set: %s", set.Stderr)
	t.Logf("checkpoint set: %s", strings.TrimSpace(strings.SplitN(set.Stderr, "\n", 2)[0]))
	// The position inside the transaction, as an offset again, is
	// Debezium's own.
	show := harness.RunCLI(t, append(append([]string{"checkpoint", "show"}, args...), "--as-debezium-offset")...)
	require.Equal(t, 0, show.Code, "checkpoint show: %s", show.Stderr)
	back, err := checkpoint.ParseDebeziumOffset(show.Stdout)
	require.NoError(t, err)
	offset, err := checkpoint.ParseDebeziumOffset(last)
	require.NoError(t, err)
	require.Equal(t, offset, back, "checkpoint show --as-debezium-offset of the position taken from %s", last)
	r := harness.StartRouter(t, args...)
	before := col.Distinct()
	harness.Eventually(t, 3*time.Minute, "the router publishes 200 new rows", func() bool { return col.Distinct() >= before+200 || !r.Running() })
	r.MustRun("cut-over after a crash")

	rows, txns, allowed, v := cutoverDelivery(t, load, col, offset, published)
	require.Equal(t, len(allowed), v.Duplicated, "every row published after the committed offset is published again, once")
	require.Equal(t, 0, r.Stop(30*time.Second))
	t.Logf("cut-over after a crash: %d rows committed in %d transactions; debezium published %d before it died, %d of them after its committed offset (event %d, row %d); %s",
		rows, txns, len(published), len(allowed), offset.Event, offset.Row, v)
}

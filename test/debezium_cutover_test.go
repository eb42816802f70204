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
)

// dbzTopics is the outbox topics of dbzLoad's aggregate types.
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
	w := newDebeziumWorld(t, nil)
	w.createTopics(dbzTopics...)
	name, config := w.connectorConfig("outbox-connector.json")
	w.startConnector(name, config)
	col := newCollector(t, w.kafka.Brokers, `^outbox\.event\..*`)
	load := startDbzLoad(t, w.db, 200)
	ctx := ctxTimeout(t, 10*time.Minute)

	// Debezium publishes while rows come in, then stops.
	eventually(t, 3*time.Minute, "debezium publishes 300 rows", func() bool { return col.distinct() >= 300 })
	require.NoError(t, w.connect.StopConnector(ctx, name))
	published := w.readAllPublished(col)
	offsets, err := w.connect.OffsetsText(ctx, name)
	require.NoError(t, err)
	t.Logf("debezium stopped after publishing %d records; GET /connectors/%s/offsets: %s", len(published), name, offsets)

	// The router takes over from Debezium's committed offset.
	args := w.routerArgs("cutover")
	set := cliRun(t, append(append([]string{"checkpoint", "set"}, args...), "--from-debezium-offset", offsets)...)
	require.Equal(t, 0, set.code, "checkpoint set: %s", set.stderr)
	t.Logf("checkpoint set: %s", strings.TrimSpace(set.stderr))
	r := startRouter(t, args...)
	before := col.distinct()
	eventually(t, 3*time.Minute, "the router publishes 300 new rows", func() bool { return col.distinct() >= before+300 || !r.running() })
	r.mustRun("cut-over")

	// ... and hands back to Debezium.
	require.Equal(t, 0, r.stop(30*time.Second))
	show := cliRun(t, append(append([]string{"checkpoint", "show"}, args...), "--as-debezium-offset")...)
	require.Equal(t, 0, show.code, "checkpoint show: %s", show.stderr)
	patch := `{"offsets":[{"partition":{"server":"` + config["topic.prefix"] + `"},"offset":` + strings.TrimSpace(show.stdout) + `}]}`
	t.Logf("router stopped; PATCH /connectors/%s/offsets %s", name, patch)
	require.NoError(t, w.connect.AlterOffsetsText(ctx, name, patch))
	require.NoError(t, w.connect.ResumeConnector(ctx, name))
	before = col.distinct()
	eventually(t, 3*time.Minute, "debezium publishes 300 new rows", func() bool { return col.distinct() >= before+300 })

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
func cutoverDelivery(t *testing.T, load *dbzLoad, col *collector, offset checkpoint.DebeziumOffset, published map[string]bool) (rows, txns int, allowed map[string]bool, v verdict) {
	t.Helper()
	load.stop()
	committed, err := load.committed()
	require.NoError(t, err, "the load")
	want := map[string]outboxRow{}
	for _, txn := range committed {
		for _, row := range txn.Rows {
			want[row.ID] = row
		}
	}
	col.waitAll(t, want, 3*time.Minute)
	got := col.settle(t, 3*time.Second)
	allowed = publishedAfter(t, committed, offset, published)
	v = checkDelivery(t, want, got, func(d delivered) bool { return allowed[d.ID] })
	return len(want), len(committed), allowed, v
}

// readAllPublished waits until the collector has read every record now in
// the outbox topics (their end offsets) and returns the ids read.
func (w *dbzWorld) readAllPublished(col *collector) map[string]bool {
	w.t.Helper()
	adm := newAdmin(w.t, w.kafka.Brokers)
	ends, err := adm.ListEndOffsets(context.Background(), dbzTopics...)
	require.NoError(w.t, err)
	eventually(w.t, time.Minute, "reading the topics to their end", func() bool {
		col.mu.Lock()
		defer col.mu.Unlock()
		next := map[string]int64{}
		for _, d := range col.recs {
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
	col.mu.Lock()
	defer col.mu.Unlock()
	ids := map[string]bool{}
	for _, d := range col.recs {
		ids[d.ID] = true
	}
	return ids
}

// publishedAfter returns the rows of published that lie after Debezium's
// offset o in binlog order: the rows a router starting at o publishes
// again. The transactions are dbzLoad's, in commit order, so their event
// layout is known: GTID, TABLE_MAP and WRITE_ROWS of the business row,
// then per outbox INSERT a TABLE_MAP and a WRITE_ROWS; o's event counts
// from the GTID event and its row counts rows of the event after those.
func publishedAfter(t *testing.T, txns []dbzTxn, o checkpoint.DebeziumOffset, published map[string]bool) map[string]bool {
	t.Helper()
	_, upTo, ok := parseGTID(o.GTIDs)
	require.True(t, ok, "offset gtids %q", o.GTIDs)
	after := map[string]bool{}
	inOffsetTxn := false
	for _, txn := range txns {
		_, seq, ok := parseGTID(txn.GTID)
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
func dbzRowsDone(txn dbzTxn, events, rows int64) int {
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
	w := newDebeziumWorld(t, map[string]string{"offset.flush.interval.ms": "1000"})
	w.createTopics(dbzTopics...)
	name, config := w.connectorConfig("outbox-connector.json")
	w.startConnector(name, config)
	col := newCollector(t, w.kafka.Brokers, `^outbox\.event\..*`)
	load := startDbzLoad(t, w.db, 100)
	ctx := ctxTimeout(t, 10*time.Minute)
	eventually(t, 3*time.Minute, "debezium publishes 100 rows", func() bool { return col.distinct() >= 100 })

	// A large transaction; the worker is killed once its committed offset
	// is inside it (another one is tried if Debezium got through first).
	var inside bool
	for attempt := 1; attempt <= 3 && !inside; attempt++ {
		big, err := load.bigTx(ctx, 20000)
		require.NoError(t, err)
		_ = poll(2*time.Minute, func() bool {
			o, err := w.connect.Offsets(ctx, name)
			if err != nil || len(o) != 1 {
				return false
			}
			off, err := checkpoint.ParseDebeziumOffset(string(o[0].Offset))
			if err != nil {
				return false
			}
			_, seq, _ := parseGTID(off.GTIDs)
			_, bigSeq, _ := parseGTID(big.GTID)
			// Inside the large transaction: the offset's gtids end just
			// before it (the load may have committed one of its own between
			// reading the position and the large transaction's start).
			inside = seq == bigSeq-1 && off.InTransaction()
			return inside || seq >= bigSeq
		})
		t.Logf("attempt %d: transaction %s of %d rows; committed offset inside it: %v", attempt, big.GTID, len(big.Rows), inside)
	}
	w.connect.Kill()
	require.True(t, inside, "no committed offset inside a large transaction in 3 attempts")
	published := w.readAllPublished(col)

	// The committed offset, as kcat prints the offsets topic's records.
	out, err := exec.Command(kcat, "-C", "-b", strings.Join(w.kafka.Brokers, ","), "-t", "connect-offsets",
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

	args := w.routerArgs("crashover")
	set := cliRun(t, append(append([]string{"checkpoint", "set"}, args...), "--from-debezium-offset", last)...)
	require.Equal(t, 0, set.code, "checkpoint set: %s", set.stderr)
	t.Logf("checkpoint set: %s", strings.TrimSpace(strings.SplitN(set.stderr, "\n", 2)[0]))
	// The position inside the transaction, as an offset again, is
	// Debezium's own.
	show := cliRun(t, append(append([]string{"checkpoint", "show"}, args...), "--as-debezium-offset")...)
	require.Equal(t, 0, show.code, "checkpoint show: %s", show.stderr)
	back, err := checkpoint.ParseDebeziumOffset(show.stdout)
	require.NoError(t, err)
	offset, err := checkpoint.ParseDebeziumOffset(last)
	require.NoError(t, err)
	require.Equal(t, offset, back, "checkpoint show --as-debezium-offset of the position taken from %s", last)
	r := startRouter(t, args...)
	before := col.distinct()
	eventually(t, 3*time.Minute, "the router publishes 200 new rows", func() bool { return col.distinct() >= before+200 || !r.running() })
	r.mustRun("cut-over after a crash")

	rows, txns, allowed, v := cutoverDelivery(t, load, col, offset, published)
	require.Equal(t, len(allowed), v.Duplicated, "every row published after the committed offset is published again, once")
	require.Equal(t, 0, r.stop(30*time.Second))
	t.Logf("cut-over after a crash: %d rows committed in %d transactions; debezium published %d before it died, %d of them after its committed offset (event %d, row %d); %s",
		rows, txns, len(published), len(allowed), offset.Event, offset.Row, v)
}

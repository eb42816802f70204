package recovery

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
)

// fakeSink records what a publisher produces and commits.
type fakeSink struct {
	produced  []*kgo.Record
	commits   []int // records produced at each commit
	failAfter int   // Produce fails after this many records (0: never)
	limit     int   // records over this batch size are refused (0: none)
}

func (f *fakeSink) Produce(ctx context.Context, rec *kgo.Record) error {
	if f.limit > 0 {
		if err := kafka.FlagLimits(f.limit).Check(ctx, rec); err != nil {
			return err
		}
	}
	if f.failAfter > 0 && len(f.produced) >= f.failAfter {
		return fmt.Errorf("broker gone")
	}
	f.produced = append(f.produced, rec)
	return nil
}

func (f *fakeSink) Commit(_ context.Context, cp *checkpoint.Checkpoint) error {
	if cp != nil {
		return fmt.Errorf("a recovery commits no checkpoint with its records")
	}
	f.commits = append(f.commits, len(f.produced))
	return nil
}
func (f *fakeSink) Abort(context.Context, error) {}
func (f *fakeSink) Close(context.Context) error  { return nil }

func testRow(i int, typ string) *binlog.OutboxRow {
	return &binlog.OutboxRow{Database: "shop", Table: "outbox",
		EventID:       []byte(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)),
		AggregateType: []byte("order"), AggregateID: []byte(fmt.Sprintf("o-%d", i%3)),
		EventType: []byte(typ), Payload: []byte(`{}`)}
}

func newTestPublisher(t *testing.T, out sink, known *kafka.IDSet, commitEvery int) (*publisher, *Summary) {
	t.Helper()
	router, err := route.New(route.Config{TopicTemplate: "t.{event_type}", ValidateJSON: true, RequireUUID: true})
	require.NoError(t, err)
	sum := &Summary{}
	cfg := &Config{CommitRecords: commitEvery, DryRun: out == nil}
	return &publisher{cfg: cfg, router: router, known: known, out: out, counts: map[string]*TopicCount{}, log: zerolog.Nop(), sum: sum}, sum
}

// TestPublisherSkipsKnownAndCommitsInTurns: ids already in Kafka are
// counted and not produced; a commit comes every CommitRecords records
// and once at the end; counts are per topic.
func TestPublisherSkipsKnownAndCommitsInTurns(t *testing.T) {
	known := kafka.NewIDSet()
	for i := 0; i < 10; i += 3 {
		known.Add(testRow(i, "A").EventID)
	}
	out := &fakeSink{}
	p, sum := newTestPublisher(t, out, known, 4)
	ctx := t.Context()
	txn := &binlog.Txn{}
	for i := range 10 {
		typ := "A"
		if i >= 7 {
			typ = "B"
		}
		require.NoError(t, p.row(ctx, testRow(i, typ), txn))
	}
	require.NoError(t, p.run(ctx, nil, nil))
	assert.Equal(t, int64(10), sum.Rows)
	assert.Equal(t, int64(4), sum.Skipped, "ids 0, 3, 6, 9")
	assert.Equal(t, int64(6), sum.Published)
	assert.Len(t, out.produced, 6)
	assert.Equal(t, []int{4, 6}, out.commits, "every 4 records, then the rest")
	for _, rec := range out.produced {
		id := string(rec.Headers[0].Value)
		assert.False(t, known.Has([]byte(id)), "%s was known", id)
	}
	a, b := p.counts["t.A"], p.counts["t.B"]
	require.NotNil(t, a)
	require.NotNil(t, b)
	assert.Equal(t, []int64{7, 3, 4}, []int64{a.InWindow, a.Known, a.Published})
	assert.Equal(t, []int64{3, 1, 2}, []int64{b.InWindow, b.Known, b.Published})
	assert.Len(t, a.FirstIDs, 4)
}

// TestPublisherDryRunProducesNothing: a dry run counts the same and has
// no sink.
func TestPublisherDryRunProducesNothing(t *testing.T) {
	known := kafka.NewIDSet()
	known.Add(testRow(0, "A").EventID)
	p, sum := newTestPublisher(t, nil, known, 4)
	for i := range 12 {
		require.NoError(t, p.row(t.Context(), testRow(i, "A"), &binlog.Txn{}))
	}
	require.NoError(t, p.run(t.Context(), nil, nil))
	assert.Equal(t, []int64{12, 1, 11}, []int64{sum.Rows, sum.Skipped, sum.Published})
	assert.Len(t, p.counts["t.A"].FirstIDs, dryRunIDs)
}

// TestPublisherStopsAtRowError: a row that cannot be routed stops the
// recovery before it is produced, naming the table.
func TestPublisherStopsAtRowError(t *testing.T) {
	out := &fakeSink{}
	p, _ := newTestPublisher(t, out, kafka.NewIDSet(), 100)
	bad := testRow(1, "A")
	bad.EventID = []byte("not-a-uuid")
	err := p.row(t.Context(), bad, &binlog.Txn{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "shop.outbox")
	assert.Empty(t, out.produced)
}

// TestPublisherCountsOnlyCommitted: after a produce fails, Published
// counts the records of committed transactions only.
func TestPublisherCountsOnlyCommitted(t *testing.T) {
	out := &fakeSink{failAfter: 5}
	p, sum := newTestPublisher(t, out, kafka.NewIDSet(), 2)
	var err error
	for i := 0; i < 8 && err == nil; i++ {
		err = p.row(t.Context(), testRow(i, "A"), &binlog.Txn{})
	}
	require.ErrorContains(t, err, "broker gone")
	assert.Equal(t, int64(4), sum.Published, "two committed transactions of 2; the fifth record's is not")
	assert.Equal(t, []int{2, 4}, out.commits)
}

// TestPublisherCommitsCheckpointWithLastRecords: the checkpoint record
// is produced after the last row, in the transaction of the last
// records, and that transaction is committed once, with it; when the
// checkpoint cannot be built, that transaction is not committed.
func TestPublisherCommitsCheckpointWithLastRecords(t *testing.T) {
	cpRec := &kgo.Record{Topic: "checkpoints", Key: []byte("router"), Value: []byte(`{"gtid_set":"0-1-9"}`)}
	for _, c := range []struct {
		name    string
		rows    int
		commits []int
	}{
		{"records in the last transaction", 10, []int{4, 8, 11}},
		{"every record committed before", 8, []int{4, 8, 9}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := &fakeSink{}
			p, sum := newTestPublisher(t, out, kafka.NewIDSet(), 4)
			sum.Snapshot = Snapshot{GTID: "0-1-9"}
			var at Snapshot
			p.cfg.Checkpoint = func(_ context.Context, snap Snapshot) (*kgo.Record, error) {
				at = snap
				return cpRec, nil
			}
			for i := range c.rows {
				require.NoError(t, p.row(t.Context(), testRow(i, "A"), &binlog.Txn{}))
			}
			require.NoError(t, p.run(t.Context(), nil, nil))
			assert.Equal(t, "0-1-9", at.GTID, "the checkpoint is the snapshot's")
			assert.Equal(t, c.commits, out.commits, "records produced at each commit")
			assert.Same(t, cpRec, out.produced[len(out.produced)-1], "the checkpoint is the last record of the last transaction")
			assert.True(t, sum.Checkpointed)
			assert.Equal(t, int64(c.rows), sum.Published, "the checkpoint is not counted as a row")
		})
	}
	t.Run("checkpoint refused", func(t *testing.T) {
		out := &fakeSink{}
		p, sum := newTestPublisher(t, out, kafka.NewIDSet(), 4)
		p.cfg.Checkpoint = func(context.Context, Snapshot) (*kgo.Record, error) {
			return nil, fmt.Errorf("beyond the executed set")
		}
		for i := range 6 {
			require.NoError(t, p.row(t.Context(), testRow(i, "A"), &binlog.Txn{}))
		}
		require.ErrorContains(t, p.run(t.Context(), nil, nil), "beyond the executed set")
		assert.Equal(t, []int{4}, out.commits, "the last records are not committed without the checkpoint")
		assert.Equal(t, int64(4), sum.Published)
		assert.False(t, sum.Checkpointed)
	})
}

// TestPublisherDeadLetters: with OnInvalid dead-letter, a row that cannot
// be routed becomes its dead letter in the dead-letter topic, counted
// there, and one whose id is known (diverted before) is skipped.
func TestPublisherDeadLetters(t *testing.T) {
	out := &fakeSink{}
	p, sum := newTestPublisher(t, out, kafka.NewIDSet(), 100)
	p.cfg.OnInvalid, p.cfg.DeadLetterTopic = pipeline.InvalidDeadLetter, "dlq"
	bad := testRow(1, "A")
	bad.AggregateID = nil
	known := testRow(2, "A")
	known.AggregateID = nil
	p.known.Add(known.EventID)
	for _, r := range []*binlog.OutboxRow{testRow(0, "A"), bad, known, testRow(3, "A")} {
		require.NoError(t, p.row(t.Context(), r, &binlog.Txn{}))
	}
	require.NoError(t, p.run(t.Context(), nil, nil))
	require.Len(t, out.produced, 3)
	dl := out.produced[1]
	assert.Equal(t, "dlq", dl.Topic)
	kind := ""
	for _, h := range dl.Headers {
		if h.Key == route.HeaderErrorKind {
			kind = string(h.Value)
		}
	}
	assert.NotEmpty(t, kind)
	assert.Equal(t, int64(2), sum.DeadLettered, "both refused rows are counted")
	assert.Equal(t, []int64{2, 1, 1}, []int64{p.counts["dlq"].InWindow, p.counts["dlq"].Known, p.counts["dlq"].Published})
	assert.Equal(t, int64(3), sum.Published)
}

// TestPublisherDeadLettersTooLarge: a record over its topic's limit is
// refused by the sink and becomes a dead letter that fits, or stops the
// recovery naming the row and the setting without OnInvalid dead-letter.
func TestPublisherDeadLettersTooLarge(t *testing.T) {
	big := testRow(1, "A")
	big.Payload = []byte(`{"blob":"` + strings.Repeat("x", 4000) + `"}`)

	out := &fakeSink{limit: 2048}
	p, sum := newTestPublisher(t, out, kafka.NewIDSet(), 100)
	err := p.row(t.Context(), big, &binlog.Txn{GTID: "0-1-9"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "over --max-message-bytes (2048 bytes)")
	assert.Contains(t, err.Error(), "gtid=0-1-9")
	assert.Empty(t, out.produced)
	assert.Equal(t, int64(0), sum.DeadLettered)

	out = &fakeSink{limit: 2048}
	p, sum = newTestPublisher(t, out, kafka.NewIDSet(), 100)
	p.cfg.OnInvalid, p.cfg.DeadLetterTopic = pipeline.InvalidDeadLetter, "dlq"
	for _, r := range []*binlog.OutboxRow{testRow(0, "A"), big, testRow(2, "A")} {
		require.NoError(t, p.row(t.Context(), r, &binlog.Txn{GTID: "0-1-9"}))
	}
	require.NoError(t, p.run(t.Context(), nil, nil))
	require.Len(t, out.produced, 3)
	dl := out.produced[1]
	assert.Equal(t, "dlq", dl.Topic)
	assert.LessOrEqual(t, kafka.BatchBytes(dl), 2048, "the dead letter is truncated to fit")
	assert.Equal(t, int64(1), sum.DeadLettered)
	assert.Equal(t, int64(3), sum.Published)
}

// TestPublisherCommitsProgress: every commit but the last carries the
// progress (the last row handled, the snapshot, the window, the records
// committed with it, an earlier run's included); the last carries the
// checkpoint and no progress after it. Rows committed after the first
// snapshot (streamed) are left to run.
func TestPublisherCommitsProgress(t *testing.T) {
	out := &fakeSink{}
	p, sum := newTestPublisher(t, out, kafka.NewIDSet(), 2)
	sum.Snapshot = Snapshot{GTID: "0-1-9", File: "bin.000002", Position: 400}
	sum.Resumed = &checkpoint.Recovery{Published: 100}
	p.streamed = kafka.NewIDSet()
	p.streamed.Add(testRow(2, "A").EventID)
	var progress []*checkpoint.Recovery
	p.cfg.Progress = func(_ context.Context, r *checkpoint.Recovery) (*kgo.Record, error) {
		progress = append(progress, r)
		return &kgo.Record{Topic: "checkpoints", Key: []byte("progress")}, nil
	}
	p.cfg.Checkpoint = func(context.Context, Snapshot) (*kgo.Record, error) {
		return &kgo.Record{Topic: "checkpoints", Key: []byte("final")}, nil
	}
	p.at.table = "shop.outbox"
	for i := range 6 {
		p.at.row = &cursor{key: fmt.Sprint(i)}
		require.NoError(t, p.row(t.Context(), testRow(i, "A"), &binlog.Txn{}))
	}
	require.NoError(t, p.run(t.Context(), nil, nil))

	var keys []string
	for _, rec := range out.produced {
		keys = append(keys, string(rec.Key))
	}
	assert.Equal(t, []string{"o-0", "o-1", "progress", "o-0", "o-1", "progress", "o-2", "final"}, keys,
		"row 2 is left to run; a progress record ends each transaction but the last")
	require.Len(t, progress, 2)
	assert.Equal(t, "1", string(progress[0].After))
	assert.Equal(t, "4", string(progress[1].After), "the second transaction ends with row 4")
	for _, r := range progress {
		assert.Equal(t, "shop.outbox", r.Table)
		assert.Equal(t, "0-1-9", r.Snapshot)
		assert.Equal(t, uint64(400), r.SnapshotPos)
		assert.Equal(t, p.cfg.Window(), r.Window)
	}
	assert.Equal(t, []int64{102, 104}, []int64{progress[0].Published, progress[1].Published}, "an earlier run's 100 included")
	assert.Equal(t, int64(1), sum.Streamed)
	assert.Equal(t, int64(5), sum.Published)
}

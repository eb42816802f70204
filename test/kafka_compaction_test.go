package test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestCheckpointTopicCompacted lets Apache Kafka's log cleaner compact the
// checkpoint topic (segments rolled every half second, any dirty ratio
// cleanable) while it holds committed checkpoints, transaction markers
// and aborted transactions: the router's own (killed at its commit
// request, so its checkpoint record was in the log when the transaction
// was aborted) and planted ones whose checkpoint record names a position
// far ahead, which a load that read aborted records would take. Cleaning
// is proved on disk: the cleaner's checkpoint file passes every aborted
// transaction, and below it Kafka's DumpLogSegments finds at most one
// checkpoint record, none of the planted ones, and the COMMIT and ABORT
// markers. The router, restarted, loads the last committed checkpoint,
// and a read_committed consumer reads every row exactly once.
func TestCheckpointTopicCompacted(t *testing.T) {
	if !harness.OnApache() || harness.SharedApache == nil {
		t.Skipf("runs on the Apache Kafka pass (%s=apache): kfake has no log cleaner", harness.BrokerEnv)
	}
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	proxy := harness.ProxiedRouter(t, e)
	topic := e.CheckpointTopic()
	adm := e.Admin()
	configs := map[string]*string{}
	for k, v := range map[string]string{
		"cleanup.policy": "compact", "segment.ms": "500", "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0",
	} {
		configs[k] = &v
	}
	created, err := adm.CreateTopic(context.Background(), 1, 1, configs, topic)
	require.NoError(t, err)
	require.NoError(t, created.Err)
	endOffset := func() int64 {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		require.NoError(t, err)
		o, _ := ends.Lookup(topic, 0)
		return o.Offset
	}

	const name = "compact"
	bogus := "0-1-999999999"
	r := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 20, 0), 300)
	const rounds = 3
	var planted []int64
	routerAborts := 0
	for i := range rounds {
		col.WaitProgress(t, r, 100, 2*time.Minute, fmt.Sprintf("routing, round %d", i+1))
		planted = append(planted, plantAbortedCheckpoint(t, e, topic, name, bogus))
		// Kill the router at its next commit request: the transaction, its
		// checkpoint record flushed, is aborted by the next instance.
		tr := proxy.At(kmsg.EndTxn, func() harness.ProxyAction {
			r.Kill()
			return harness.Drop
		})
		require.True(t, proxy.Wait(tr, time.Minute), "the router sent no EndTxn within a minute")
		if harness.TxnState(t, e.Kafka.Brokers, harness.RouterTxnIDs(name)...) == "Ongoing" {
			routerAborts++
		}
		r.Restart()
	}
	require.Positive(t, routerAborts, "no kill left a transaction of the router open")
	aborted := endOffset() // every aborted transaction lies below

	// More commits roll more segments; the cleaner passes them.
	col.WaitProgress(t, r, 300, 2*time.Minute, "routing after the kills")
	var cleaned int64
	harness.Eventually(t, 2*time.Minute, fmt.Sprintf("the log cleaner passing offset %d of %s", aborted, topic), func() bool {
		cleaned = cleanerOffset(t, harness.SharedApache.DataDir(0), topic)
		return cleaned > aborted
	})

	// Stopped, the router appends nothing more and the segments hold still
	// for DumpLogSegments. A restart then loads the last committed
	// checkpoint from the compacted topic, and nothing is lost or repeated.
	l.Stop()
	require.NoError(t, harness.Poll(2*time.Minute, func() bool { return col.Missing(harness.CommittedRows(t, e.DB)) == 0 }))
	require.Equal(t, 0, r.Stop(30*time.Second))
	end := endOffset()
	d := dumpSegments(t, filepath.Join(harness.SharedApache.DataDir(0), topic+"-0"), cleaned, bogus)
	t.Logf("%d offsets, cleaned up to %d (aborted transactions below %d, planted records at %v); below it %d segment(s) hold %d checkpoint record(s) (%d planted), %d COMMIT and %d ABORT markers",
		end, cleaned, aborted, planted, d.segments, d.records, d.bogus, d.commits, d.aborts)
	assert.LessOrEqual(t, d.records, 1, "at most the newest checkpoint record below the cleaner's offset")
	assert.Zero(t, d.bogus, "the aborted planted records removed")
	assert.Positive(t, d.aborts, "ABORT markers (of the planted and the router's aborted transactions) kept")
	assert.Greater(t, d.commits, d.records, "more commits than the checkpoint records kept")
	want := e.GTIDPos()
	require.Equal(t, want, e.MustCheckpoint(name).GTIDSet, "the last committed checkpoint")
	r.Restart()
	require.NoError(t, r.WaitLog(ctxTimeout(t, time.Minute), `"gtid_set":"`+want+`"`))
	v := harness.FinishRun(t, e.DB, l, col, r, 2*time.Minute)
	t.Logf("aborted transactions: %d planted, %d of the router's; restart resumed at %s; %s", rounds, routerAborts, want, v)
}

// plantAbortedCheckpoint writes, in a transaction it aborts, a checkpoint
// record for name whose GTID set is bogus, and returns its offset.
func plantAbortedCheckpoint(t testing.TB, e *harness.Env, topic, name, bogus string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Kafka.Brokers...), kgo.TransactionalID("planter-"+e.Prefix))
	require.NoError(t, err)
	defer cl.Close()
	cp := checkpoint.Checkpoint{Name: name, GTIDSet: bogus, Flavor: "mariadb", ServerID: e.Maria.ServerID(), Time: time.Now().UTC()}
	rec, err := cp.Record(topic)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cl.BeginTransaction())
	res := cl.ProduceSync(ctx, rec)
	require.NoError(t, res.FirstErr())
	require.NoError(t, cl.EndTransaction(ctx, kgo.TryAbort))
	return res[0].Record.Offset
}

// cleanerOffset is the offset up to which the log cleaner has cleaned
// topic's partition 0, from its cleaner-offset-checkpoint file (0 when
// not yet).
func cleanerOffset(t testing.TB, dataDir, topic string) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dataDir, "cleaner-offset-checkpoint"))
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 3 && fs[0] == topic && fs[1] == "0" {
			n, err := strconv.ParseInt(fs[2], 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	return 0
}

// segmentDump is what DumpLogSegments printed for a partition, below an
// offset.
type segmentDump struct {
	segments        int
	records, bogus  int // data records, and those holding the bogus text
	commits, aborts int // transaction markers
}

// dumpSegments runs Kafka's DumpLogSegments over a copy of the
// partition's segments (the cleaner may still replace them) and counts
// the records and transaction markers below offset below.
func dumpSegments(t testing.TB, dir string, below int64, bogus string) segmentDump {
	t.Helper()
	var d segmentDump
	err := harness.Poll(time.Minute, func() bool {
		files, err := copySegments(dir, t.TempDir())
		if err != nil || len(files) == 0 {
			t.Logf("copying the segments of %s (retrying): %v", dir, err)
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := harness.SharedApache.RunTool(ctx, "org.apache.kafka.tools.DumpLogSegments", "--deep-iteration", "--print-data-log", "--files", strings.Join(files, ","))
		if err != nil {
			t.Logf("DumpLogSegments (retrying): %v", err)
			return false
		}
		d = segmentDump{segments: len(files)}
		for _, line := range strings.Split(out, "\n") {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "| offset: ")
			if !ok {
				continue
			}
			if off, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64); err != nil || off >= below {
				continue
			}
			switch {
			case strings.Contains(line, "endTxnMarker: COMMIT"):
				d.commits++
			case strings.Contains(line, "endTxnMarker: ABORT"):
				d.aborts++
			default:
				d.records++
				if strings.Contains(line, bogus) {
					d.bogus++
				}
			}
		}
		return true
	})
	require.NoError(t, err, "DumpLogSegments")
	return d
}

// copySegments copies the *.log files of dir into to and returns the
// copies in offset order.
func copySegments(dir, to string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c := filepath.Join(to, filepath.Base(f))
		if err := os.WriteFile(c, b, 0o644); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

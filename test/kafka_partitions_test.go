package test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestPartitionCountChange: partitions added to an outbox topic while rows
// flow. With --on-partition-change=fail the router logs a WARN naming the
// topic and both counts within 10 s and exits with code 5; every record a
// read_committed consumer reads was placed by the old count, and the
// checkpoint is exactly what was read. Started again (warn, the default),
// it resumes from that checkpoint under the new count, each row once;
// partitions added once more are met with the WARN, the metric and a line
// of /readyz (still ready) within 10 s, and the producer moves to the new
// count at once instead of at franz-go's 5-minute metadata refresh.
func TestPartitionCountChange(t *testing.T) {
	rng := harness.FaultRand(t)
	e := harness.NewEnv(t, harness.EnvOpts{})
	topic := e.Prefix + ".Created"
	adm := e.Admin()
	created, err := adm.CreateTopics(context.Background(), 2, 1, nil, topic)
	require.NoError(t, err)
	require.NoError(t, created.Error())

	const name = "partitions"
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 50, 0, "Created"), 200)
	r := harness.StartRouter(t, e.Args(name, "--on-partition-change", "fail", "--commit-interval", "100ms")...)
	col.WaitProgress(t, r, 100, time.Minute, "routing before partitions are added")

	var added time.Time
	detect := func(r *harness.Router, from, to int) time.Duration {
		t.Helper()
		added = addPartitions(t, e, topic, to)
		warn := fmt.Sprintf(`"old_partitions":%d,"new_partitions":%d`, from, to)
		harness.Eventually(t, 10*time.Second, "the WARN of the partition count change", func() bool {
			return strings.Contains(r.LastLogLine(warn), `"level":"warn"`)
		})
		took := time.Since(added)
		line := r.LastLogLine(warn)
		assert.Contains(t, line, `"topic":"`+topic+`"`)
		t.Logf("partitions %d -> %d: detected after %s: %s", from, to, took.Round(time.Millisecond), line)
		return took
	}

	// fail: the router stops before a record is placed by the new count.
	detect(r, 2, 4)
	require.Equal(t, 5, r.Wait(20*time.Second), "exit code of --on-partition-change=fail (docs/exit-codes.md)")
	assert.Contains(t, r.Out.String(), "--on-partition-change=fail")
	before := col.Settle(t, 2*time.Second)
	cp := e.MustCheckpoint(name)
	cpSeqs := harness.GTIDSeqs(t, cp.GTIDSet)
	if cp.TxnGTID != "" {
		d, n, ok := harness.ParseGTID(cp.TxnGTID)
		require.True(t, ok, cp.TxnGTID)
		cpSeqs[d] = max(cpSeqs[d], n)
	}
	require.NotEmpty(t, before)
	for _, d := range before {
		assert.Equal(t, int32(route.PartitionFor([]byte(d.Key), 2)), d.Partition, "record %s key %q placed by 2 partitions", d.ID, d.Key)
		dom, seq, ok := harness.ParseGTID(d.GTID)
		require.True(t, ok, d.GTID)
		assert.LessOrEqual(t, seq, cpSeqs[dom], "record %s (%s) read but after the checkpoint %s", d.ID, d.GTID, cp.GTIDSet)
	}
	t.Logf("fail: %d records read, all placed by 2 partitions; checkpoint %s", len(before), cp.GTIDSet)

	// warn: resumes under the new count, and reports the next change.
	r = harness.StartRouter(t, e.Args(name, "--metrics-addr", "127.0.0.1:0", "--commit-interval", "100ms")...)
	base := "http://" + metricsAddr(t, r)
	col.WaitProgress(t, r, 100, time.Minute, "routing under 4 partitions")
	detect(r, 4, 6)
	harness.Eventually(t, 5*time.Second, "the metric and /readyz", func() bool {
		code, body := getURL(t, base+"/readyz")
		return metricValue(t, base, `binlog_router_kafka_partition_changes_total{topic="`+topic+`"}`) == 1 &&
			code == http.StatusOK && strings.Contains(body, "partitions: topic "+topic+" went from 4 to 6 partitions")
	})
	harness.Eventually(t, 10*time.Second, "a record placed by 6 partitions", func() bool {
		for _, d := range col.Settle(t, 0)[len(before):] {
			if p := int32(route.PartitionFor([]byte(d.Key), 6)); d.Partition == p && p != int32(route.PartitionFor([]byte(d.Key), 4)) {
				return true
			}
		}
		return false
	})
	t.Logf("partitions 4 -> 6: the first record placed by 6 partitions read %s after the change", time.Since(added).Round(time.Millisecond))
	l.Stop()
	want := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, want, time.Minute)
	require.Equal(t, 0, r.Stop(30*time.Second))
	all := col.Settle(t, time.Second)
	seen := map[string]int{}
	for i, d := range all {
		seen[d.ID]++
		if i < len(before) {
			continue
		}
		by4, by6 := int32(route.PartitionFor([]byte(d.Key), 4)), int32(route.PartitionFor([]byte(d.Key), 6))
		assert.True(t, d.Partition == by4 || d.Partition == by6, "record %s key %q on partition %d: neither 4 (%d) nor 6 (%d) partitions", d.ID, d.Key, d.Partition, by4, by6)
	}
	for id, n := range seen {
		assert.Equal(t, 1, n, "event %s read %d times", id, n)
	}
	assert.Len(t, seen, len(want), "every committed row read")
}

// addPartitions raises topic to n partitions (CreatePartitions) and
// returns when the brokers answered, which is before or when their
// metadata shows the new partitions.
func addPartitions(t *testing.T, e *harness.Env, topic string, n int) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := e.Admin().UpdatePartitions(ctx, n, topic)
	require.NoError(t, err)
	require.NoError(t, resp.Error())
	return time.Now()
}

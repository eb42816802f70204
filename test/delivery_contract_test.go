package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestTwoGTIDDomains writes events in two MariaDB replication domains: the
// checkpoint holds both, and a restart repeats nothing.
func TestTwoGTIDDomains(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	ctx := context.Background()
	conn, err := e.DB.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	var want []string
	insert := func(domain int) {
		_, err := conn.ExecContext(ctx, fmt.Sprintf("SET SESSION gtid_domain_id=%d", domain))
		require.NoError(t, err)
		ev := harness.NewEvent(fmt.Sprintf("agg-%d", domain), "Domain", `{}`)
		require.NoError(t, harness.InsertEvent(conn, ev))
		want = append(want, ev.ID)
	}
	for i := 0; i < 6; i++ {
		insert(i % 2)
	}
	r := harness.StartRouter(t, e.Args("domains")...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	got := c.Read(6, 60*time.Second)
	require.Equal(t, 0, r.Stop(20*time.Second))

	cp := e.MustCheckpoint("domains")
	assert.Regexp(t, `^0-1-\d+,1-1-\d+$`, cp.GTIDSet, "both domains in the checkpoint")
	assert.Equal(t, "mariadb", cp.Flavor)

	for i := 0; i < 4; i++ {
		insert(i % 2)
	}
	r.Restart()
	got = append(got, c.Read(4, 60*time.Second)...)
	got = append(got, c.Quiet(time.Second)...)
	assert.ElementsMatch(t, want, harness.RecordIDs(got))
	require.Equal(t, 0, r.Stop(20*time.Second))
}

// TestLargeTransaction streams one 100k-row transaction.
func TestLargeTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: 100k-row transaction")
	}
	e := harness.NewEnv(t, harness.EnvOpts{})
	const n, perStmt = 100000, 1000
	tx, err := e.DB.Begin()
	require.NoError(t, err)
	for i := 0; i < n; i += perStmt {
		var sb strings.Builder
		args := make([]any, 0, perStmt*3)
		sb.WriteString("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES ")
		for j := 0; j < perStmt; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(UUID(), 'bulk', ?, 'Bulk', ?)")
			args = append(args, fmt.Sprintf("agg-%d", (i+j)%100), fmt.Sprintf(`{"seq":%d}`, i+j))
		}
		_, err := tx.Exec(sb.String(), args...)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
	r := harness.StartRouter(t, e.Args("big")...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	got := c.Read(n, 5*time.Minute)
	got = append(got, c.Quiet(time.Second)...)
	require.Len(t, got, n)
	// Rows of one transaction keep their binlog order per aggregate.
	last := map[string]int{}
	for _, rec := range got {
		var v struct{ Seq int }
		require.NoError(t, json.Unmarshal(rec.Value, &v))
		if p, ok := last[string(rec.Key)]; ok {
			require.Less(t, p, v.Seq, "aggregate %s out of order", rec.Key)
		}
		last[string(rec.Key)] = v.Seq
	}
	require.Equal(t, 0, r.Stop(30*time.Second))
}

// TestDDLMidStream alters the outbox table while routing; rows before and
// after are mapped right, whether the binlog carries column names (FULL
// metadata) or they come from information_schema (MINIMAL).
func TestDDLMidStream(t *testing.T) {
	for _, meta := range []string{"FULL", "MINIMAL"} {
		t.Run(meta, func(t *testing.T) {
			e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=" + meta}}})
			r := harness.StartRouter(t, e.Args("ddl")...)
			c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
			before := harness.NewEvent("a1", "BeforeDDL", `{"v":1}`)
			e.InsertTx(before)
			c.Read(1, 60*time.Second)
			// A new column in front of the mapped ones shifts every ordinal.
			e.Exec("ALTER TABLE outbox ADD COLUMN tenant VARCHAR(32) NOT NULL DEFAULT 'acme' AFTER id")
			after := harness.NewEvent("a1", "AfterDDL", `{"v":2}`)
			e.InsertTx(after)
			got := c.Read(1, 60*time.Second)
			require.Len(t, got, 1)
			id, _ := harness.Header(got[0], "id")
			assert.Equal(t, after.ID, id)
			assert.Equal(t, e.Prefix+".AfterDDL", got[0].Topic)
			assert.Equal(t, `{"v":2}`, string(got[0].Value))
			assert.Equal(t, "a1", string(got[0].Key))
			require.Equal(t, 0, r.Stop(20*time.Second))
		})
	}
}

// TestKcatReadsRecords reads the records with librdkafka's kcat, an
// independent client: same keys, headers and values, from zstd-compressed
// batches (every other test produces snappy ones, the default).
func TestKcatReadsRecords(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat not installed (apt-get install kcat; .ci/run installs it): %v", err)
	}
	e := harness.NewEnv(t, harness.EnvOpts{})
	evs := []harness.Event{harness.NewEvent("k1", "Kcat", `{"a":1}`), harness.NewEvent("k2", "Kcat", `{"b":"ü"}`)}
	e.InsertTx(evs...)
	r := harness.StartRouter(t, e.Args("kcat", "--compression", "zstd")...)
	harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(2, 60*time.Second)
	require.Equal(t, 0, r.Stop(20*time.Second))

	out, err := exec.Command(kcat, "-C", "-b", strings.Join(e.Kafka.Brokers, ","), "-t", e.Prefix+".Kcat",
		"-X", "isolation.level=read_committed", "-X", "fetch.wait.max.ms=10", "-o", "beginning", "-e", "-q",
		"-f", "%k|%h|%s\n").CombinedOutput()
	require.NoError(t, err, "kcat: %s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	sort.Strings(lines)
	require.Len(t, lines, 2, "kcat output: %s", out)
	for i, ev := range evs {
		parts := strings.SplitN(lines[i], "|", 3)
		require.Len(t, parts, 3, lines[i])
		assert.Equal(t, ev.AggID, parts[0])
		assert.Contains(t, parts[1], "id="+ev.ID)
		assert.Contains(t, parts[1], "event_type=Kcat")
		assert.Contains(t, parts[1], "aggregate_type=order")
		assert.Regexp(t, `binlog_gtid=0-1-\d+`, parts[1])
		assert.Equal(t, *ev.Payload, parts[2])
	}
}

// TestCheckpointShow prints the stored checkpoint with the CLI.
func TestCheckpointShow(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.InsertTx(harness.NewEvent("x", "Show", `{}`))
	r := harness.StartRouter(t, e.Args("show")...)
	harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(1, 60*time.Second)
	require.Equal(t, 0, r.Stop(20*time.Second))
	gtidPos := e.GTIDPos()

	out, err := exec.Command(harness.RouterBin, "checkpoint", "show", "--name", "show",
		"--kafka-brokers", strings.Join(e.Kafka.Brokers, ","), "--checkpoint-topic", e.CheckpointTopic()).Output()
	require.NoError(t, err)
	var cp checkpoint.Checkpoint
	require.NoError(t, json.Unmarshal(out, &cp), string(out))
	assert.Equal(t, "show", cp.Name)
	assert.Equal(t, gtidPos, cp.GTIDSet, "checkpoint at the server's last GTID")
	assert.Equal(t, "mariadb", cp.Flavor)
	assert.Equal(t, e.Maria.ServerID(), cp.ServerID)
	assert.NotEmpty(t, cp.BinlogFile)

	_, err = exec.Command(harness.RouterBin, "checkpoint", "show", "--name", "nobody",
		"--kafka-brokers", strings.Join(e.Kafka.Brokers, ","), "--checkpoint-topic", e.CheckpointTopic()).Output()
	assert.Error(t, err, "no checkpoint for an unknown name")
}

// TestIdleOutboxAdvancesCheckpoint: transactions on other tables move the
// checkpoint, so a restart does not re-read them.
func TestIdleOutboxAdvancesCheckpoint(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	r := harness.StartRouter(t, e.Args("idle", "--idle-checkpoint", "200ms")...)
	e.InsertTx(harness.NewEvent("x", "First", `{}`))
	harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(1, 60*time.Second)
	for i := 0; i < 20; i++ {
		e.Exec("INSERT INTO orders (customer, total) VALUES ('idle', 1)")
	}
	e.WaitCheckpoint("idle", e.GTIDPos())
	require.Equal(t, 0, r.Stop(20*time.Second))
}

// TestUnmappableOutboxStops: a configured outbox table without a required
// column stops the router with an error naming the table, the GTID and
// the fix; the checkpoint does not pass the row.
func TestUnmappableOutboxStops(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec("CREATE TABLE bad_outbox (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36), aggregate_type VARCHAR(64), event_type VARCHAR(64), payload LONGTEXT)")
	e.Exec("INSERT INTO bad_outbox (event_id, aggregate_type, event_type, payload) VALUES (UUID(), 'a', 'T', '{}')")
	args := e.Args("bad")
	for i, a := range args {
		if a == e.DBName+".outbox" {
			args[i] = e.DBName + ".bad_outbox"
		}
	}
	r := harness.StartRouter(t, args...)
	code := r.Wait(60 * time.Second)
	assert.Equal(t, 1, code)
	log := r.Out.String()
	assert.Contains(t, log, "shop.bad_outbox")
	assert.Contains(t, log, "aggregate_id")
	assert.Contains(t, log, "--column-aggregate-id")
	assert.Regexp(t, `0-1-\d+`, log)
	_, err := e.Checkpoint("bad")
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing, "no checkpoint past the unroutable row")
}

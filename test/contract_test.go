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
)

// TestTwoGTIDDomains writes events in two MariaDB replication domains: the
// checkpoint holds both, and a restart repeats nothing.
func TestTwoGTIDDomains(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	conn, err := e.db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	var want []string
	insert := func(domain int) {
		_, err := conn.ExecContext(ctx, fmt.Sprintf("SET SESSION gtid_domain_id=%d", domain))
		require.NoError(t, err)
		ev := newEvent(fmt.Sprintf("agg-%d", domain), "Domain", `{}`)
		require.NoError(t, insertEvent(conn, ev))
		want = append(want, ev.ID)
	}
	for i := 0; i < 6; i++ {
		insert(i % 2)
	}
	r := startRouter(t, e.args("domains")...)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	got := c.read(6, 60*time.Second)
	require.Equal(t, 0, r.stop(20*time.Second))

	cp := e.mustCheckpoint("domains")
	assert.Regexp(t, `^0-1-\d+,1-1-\d+$`, cp.GTIDSet, "both domains in the checkpoint")
	assert.Equal(t, "mariadb", cp.Flavor)

	for i := 0; i < 4; i++ {
		insert(i % 2)
	}
	r.restart()
	got = append(got, c.read(4, 60*time.Second)...)
	got = append(got, c.quiet(time.Second)...)
	assert.ElementsMatch(t, want, recordIDs(got))
	require.Equal(t, 0, r.stop(20*time.Second))
}

// TestLargeTransaction streams one 100k-row transaction.
func TestLargeTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: 100k-row transaction")
	}
	e := newEnv(t, envOpts{})
	const n, perStmt = 100000, 1000
	tx, err := e.db.Begin()
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
	r := startRouter(t, e.args("big")...)
	c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
	got := c.read(n, 5*time.Minute)
	got = append(got, c.quiet(time.Second)...)
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
	require.Equal(t, 0, r.stop(30*time.Second))
}

// TestDDLMidStream alters the outbox table while routing; rows before and
// after are mapped right, whether the binlog carries column names (FULL
// metadata) or they come from information_schema (MINIMAL).
func TestDDLMidStream(t *testing.T) {
	for _, meta := range []string{"FULL", "MINIMAL"} {
		t.Run(meta, func(t *testing.T) {
			e := newEnv(t, envOpts{maria: devenv.MariaDBConfig{ExtraArgs: []string{"--binlog-row-metadata=" + meta}}})
			r := startRouter(t, e.args("ddl")...)
			c := newConsumer(t, e.kafka.Brokers, e.topicRegex())
			before := newEvent("a1", "BeforeDDL", `{"v":1}`)
			e.insertTx(before)
			c.read(1, 60*time.Second)
			// A new column in front of the mapped ones shifts every ordinal.
			e.exec("ALTER TABLE outbox ADD COLUMN tenant VARCHAR(32) NOT NULL DEFAULT 'acme' AFTER id")
			after := newEvent("a1", "AfterDDL", `{"v":2}`)
			e.insertTx(after)
			got := c.read(1, 60*time.Second)
			require.Len(t, got, 1)
			id, _ := header(got[0], "id")
			assert.Equal(t, after.ID, id)
			assert.Equal(t, e.prefix+".AfterDDL", got[0].Topic)
			assert.Equal(t, `{"v":2}`, string(got[0].Value))
			assert.Equal(t, "a1", string(got[0].Key))
			require.Equal(t, 0, r.stop(20*time.Second))
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
	e := newEnv(t, envOpts{})
	evs := []event{newEvent("k1", "Kcat", `{"a":1}`), newEvent("k2", "Kcat", `{"b":"ü"}`)}
	e.insertTx(evs...)
	r := startRouter(t, e.args("kcat", "--compression", "zstd")...)
	newConsumer(t, e.kafka.Brokers, e.topicRegex()).read(2, 60*time.Second)
	require.Equal(t, 0, r.stop(20*time.Second))

	out, err := exec.Command(kcat, "-C", "-b", strings.Join(e.kafka.Brokers, ","), "-t", e.prefix+".Kcat",
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
	e := newEnv(t, envOpts{})
	e.insertTx(newEvent("x", "Show", `{}`))
	r := startRouter(t, e.args("show")...)
	newConsumer(t, e.kafka.Brokers, e.topicRegex()).read(1, 60*time.Second)
	require.Equal(t, 0, r.stop(20*time.Second))
	gtidPos := e.gtidPos()

	out, err := exec.Command(routerBin, "checkpoint", "show", "--name", "show",
		"--kafka-brokers", strings.Join(e.kafka.Brokers, ","), "--checkpoint-topic", e.checkpointTopic()).Output()
	require.NoError(t, err)
	var cp checkpoint.Checkpoint
	require.NoError(t, json.Unmarshal(out, &cp), string(out))
	assert.Equal(t, "show", cp.Name)
	assert.Equal(t, gtidPos, cp.GTIDSet, "checkpoint at the server's last GTID")
	assert.Equal(t, "mariadb", cp.Flavor)
	assert.Equal(t, e.maria.ServerID(), cp.ServerID)
	assert.NotEmpty(t, cp.BinlogFile)

	_, err = exec.Command(routerBin, "checkpoint", "show", "--name", "nobody",
		"--kafka-brokers", strings.Join(e.kafka.Brokers, ","), "--checkpoint-topic", e.checkpointTopic()).Output()
	assert.Error(t, err, "no checkpoint for an unknown name")
}

// TestIdleOutboxAdvancesCheckpoint: transactions on other tables move the
// checkpoint, so a restart does not re-read them.
func TestIdleOutboxAdvancesCheckpoint(t *testing.T) {
	e := newEnv(t, envOpts{})
	r := startRouter(t, e.args("idle", "--idle-checkpoint", "200ms")...)
	e.insertTx(newEvent("x", "First", `{}`))
	newConsumer(t, e.kafka.Brokers, e.topicRegex()).read(1, 60*time.Second)
	for i := 0; i < 20; i++ {
		e.exec("INSERT INTO orders (customer, total) VALUES ('idle', 1)")
	}
	e.waitCheckpoint("idle", e.gtidPos())
	require.Equal(t, 0, r.stop(20*time.Second))
}

// TestUnmappableOutboxStops: a configured outbox table without a required
// column stops the router with an error naming the table, the GTID and
// the fix; the checkpoint does not pass the row.
func TestUnmappableOutboxStops(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.exec("CREATE TABLE bad_outbox (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36), aggregate_type VARCHAR(64), event_type VARCHAR(64), payload LONGTEXT)")
	e.exec("INSERT INTO bad_outbox (event_id, aggregate_type, event_type, payload) VALUES (UUID(), 'a', 'T', '{}')")
	args := e.args("bad")
	for i, a := range args {
		if a == e.dbName+".outbox" {
			args[i] = e.dbName + ".bad_outbox"
		}
	}
	r := startRouter(t, args...)
	code := r.wait(60 * time.Second)
	assert.Equal(t, 1, code)
	log := r.out.String()
	assert.Contains(t, log, "shop.bad_outbox")
	assert.Contains(t, log, "aggregate_id")
	assert.Contains(t, log, "--column-aggregate-id")
	assert.Regexp(t, `0-1-\d+`, log)
	_, err := e.checkpoint("bad")
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing, "no checkpoint past the unroutable row")
}

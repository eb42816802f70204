package test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// validation is the outcome of one `binlog-router validate` run.
type validation struct {
	out  string
	code int
	took time.Duration
}

// runValidate runs `binlog-router validate args...` with extra environment
// variables env ("K=V") and returns its output and exit code.
func runValidate(t testing.TB, env []string, args ...string) validation {
	t.Helper()
	cmd := exec.Command(harness.RouterBin, append([]string{"validate"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	v := validation{out: string(out), code: cmd.ProcessState.ExitCode(), took: time.Since(start)}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("running validate: %v\n%s", err, out)
	}
	t.Logf("validate %s (exit %d, %s):\n%s", strings.Join(args, " "), v.code, v.took.Round(time.Millisecond), v.out)
	return v
}

// line returns the output line of check name with status, or "".
func (v validation) line(status, name string) string {
	prefix := fmt.Sprintf("%-4s %s: ", status, name)
	for _, l := range strings.Split(v.out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// statuses maps each check name to its status.
func (v validation) statuses() map[string]string {
	re := regexp.MustCompile(`^(OK|WARN|FAIL) +([^:]+): `)
	m := map[string]string{}
	for _, l := range strings.Split(v.out, "\n") {
		if s := re.FindStringSubmatch(l); s != nil {
			m[s[2]] = s[1]
		}
	}
	return m
}

// fix returns the fix of a FAIL or WARN line.
func fixOf(t testing.TB, line string) string {
	t.Helper()
	_, fix, found := strings.Cut(line, " — fix: ")
	require.True(t, found, "line has a fix: %q", line)
	require.NotEmpty(t, fix)
	return fix
}

// assertFailsHaveFixes checks the output format: one check per line, and
// every FAIL and WARN line says what to do.
func assertFailsHaveFixes(t testing.TB, v validation) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimRight(v.out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "OK   "):
			assert.NotContains(t, l, " — fix: ")
		case strings.HasPrefix(l, "FAIL "), strings.HasPrefix(l, "WARN "):
			assert.Contains(t, l, " — fix: ", "every FAIL and WARN says how to fix it")
		case strings.HasPrefix(l, "validate: "):
		default:
			t.Errorf("unexpected output line %q", l)
		}
	}
	assert.Regexp(t, `(?m)^validate: \d+ checks: \d+ OK, \d+ WARN, \d+ FAIL: `, v.out, "summary line")
}

// TestValidateDefaultEnv: on the test environment every check passes; the
// one warning is the single kfake broker for exactly-once. validate reads
// the checkpoint a router wrote, and does not create the checkpoint topic
// itself.
func TestValidateDefaultEnv(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	v := runValidate(t, nil, e.Args("val")...)
	require.Equal(t, 0, v.code)
	assertFailsHaveFixes(t, v)
	got := v.statuses()
	txn := "WARN" // one broker
	if e.Kafka.External() && harness.SharedApache == nil {
		txn = got["kafka transactions"] // KAFKA_BROKERS: OK with 3 or more brokers
	}
	assert.Equal(t, map[string]string{
		"server":                          "OK",
		"log_bin":                         "OK",
		"binlog_format":                   "OK",
		"binlog_row_image":                "OK",
		"binlog_row_metadata":             "OK",
		"gtid":                            "OK",
		"privileges":                      "OK",
		"outbox table shop.outbox":        "OK",
		"outbox column types shop.outbox": "OK",
		"kafka":                           "OK",
		"checkpoint topic":                "OK",
		"kafka transactions":              txn,
		"replication outbox topics":       txn, // one broker: nothing survives its loss
		"replication checkpoint topic":    txn,
		"replication transaction log":     txn,
		"message size":                    "OK",
		"checkpoint":                      "OK",
		"binlog retention":                "OK",
		"binlog position":                 "OK",
	}, got)
	assert.Contains(t, v.line("OK", "server"), "MariaDB 10.")
	assert.Contains(t, v.line("OK", "privileges"), "REPLICATION SLAVE")
	assert.Contains(t, v.line("OK", "privileges"), "SELECT on shop.outbox")
	assert.Contains(t, v.line("OK", "checkpoint topic"), "does not exist yet")
	if txn == "WARN" {
		assert.Contains(t, v.line("WARN", "kafka transactions"), "the cluster has 1 broker(s)")
		assert.Contains(t, v.line("WARN", "replication checkpoint topic"), "replication factor 1")
		assert.Contains(t, v.line("WARN", "replication outbox topics"), "no topic matches "+e.Prefix+".{event_type} yet")
	}
	assert.Contains(t, v.line("OK", "checkpoint"), "none")
	assert.Less(t, v.took, 30*time.Second)

	adm := e.Admin()
	topics, err := adm.ListTopics(context.Background(), e.CheckpointTopic())
	require.NoError(t, err)
	assert.False(t, topics.Has(e.CheckpointTopic()), "validate does not create the checkpoint topic")

	t.Run("at-least-once has no transaction warning", func(t *testing.T) {
		v := runValidate(t, nil, e.Args("val", "--delivery", "at-least-once")...)
		require.Equal(t, 0, v.code)
		for name, status := range v.statuses() {
			if !strings.HasPrefix(name, "replication ") {
				assert.Equal(t, "OK", status, name)
			}
		}
		assert.Contains(t, v.line("OK", "kafka transactions"), "not used")
		assert.NotContains(t, v.out, "replication transaction log")
	})

	t.Run("reads the router's checkpoint", func(t *testing.T) {
		r := harness.StartRouter(t, e.Args("val")...)
		e.InsertTx(harness.NewEvent("v-1", "Validated", `{}`))
		pos := e.GTIDPos()
		e.WaitCheckpoint("val", pos)
		require.Equal(t, 0, r.Stop(20*time.Second))

		v := runValidate(t, nil, e.Args("val")...)
		require.Equal(t, 0, v.code)
		assert.Regexp(t, `^OK   checkpoint: \[`+regexp.QuoteMeta(pos)+`\] written \S+ \(\d+s ago\)`, v.line("OK", "checkpoint"))
		assert.Contains(t, v.line("OK", "checkpoint topic"), "cleanup.policy=compact, 1 partition")
		assert.Contains(t, v.line("OK", "binlog position"), "after the checkpoint ["+pos+"]")
	})
}

// TestValidateServerSettings: binlog settings the router cannot work with
// fail with the SET GLOBAL that fixes them, exit 2 (configuration, as run
// exits); a missing recommendation (binlog_row_metadata=FULL) only warns
// (exit 0).
func TestValidateServerSettings(t *testing.T) {
	for _, tc := range []struct {
		arg, status, check, want, fix string
		code                          int
	}{
		{"--binlog-format=STATEMENT", "FAIL", "binlog_format", "STATEMENT", "SET GLOBAL binlog_format = 'ROW'", 2},
		{"--binlog-row-image=MINIMAL", "FAIL", "binlog_row_image", "MINIMAL", "SET GLOBAL binlog_row_image = 'FULL'", 2},
		{"--binlog-row-metadata=MINIMAL", "WARN", "binlog_row_metadata", "information_schema", "SET GLOBAL binlog_row_metadata = 'FULL'", 0},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			e := harness.NewEnv(t, harness.EnvOpts{Maria: devenv.MariaDBConfig{ExtraArgs: []string{tc.arg}}})
			v := runValidate(t, nil, e.Args("settings")...)
			assert.Equal(t, tc.code, v.code)
			assertFailsHaveFixes(t, v)
			line := v.line(tc.status, tc.check)
			require.NotEmpty(t, line, "a %s %s line", tc.status, tc.check)
			assert.Contains(t, line, tc.want)
			assert.Contains(t, fixOf(t, line), tc.fix)
			assert.Contains(t, fixOf(t, line), "my.cnf", "the fix survives a restart")
			if tc.code != 0 {
				assert.Contains(t, v.out, ": fix each FAIL above")
			} else {
				assert.NotContains(t, v.out, "FAIL ")
			}

			// The printed fix works.
			stmt, _, _ := strings.Cut(fixOf(t, line), " and put it")
			e.Exec(stmt)
			v = runValidate(t, nil, e.Args("settings")...)
			assert.Equal(t, 0, v.code)
			assert.NotEmpty(t, v.line("OK", tc.check), "OK after the fix")
		})
	}
}

// TestValidatePrivileges: a user without the replication privileges fails
// with the GRANT that fixes it; after running that GRANT, it passes.
func TestValidatePrivileges(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	// A password no other output can contain by chance (a random Kafka
	// cluster id can hold any two letters).
	const password = "Vq7-never-printed-3xK"
	e.Exec("CREATE USER 'app'@'%' IDENTIFIED BY '" + password + "'")
	e.Exec("GRANT SELECT ON shop.* TO 'app'@'%'")
	args := harness.ArgsWith(e.Args("app"), "--mysql-user", "app")
	pw := []string{"BINLOG_ROUTER_MYSQL_PASSWORD=" + password}

	v := runValidate(t, pw, args...)
	assert.Equal(t, 1, v.code)
	assertFailsHaveFixes(t, v)
	line := v.line("FAIL", "privileges")
	require.NotEmpty(t, line)
	assert.Contains(t, line, "app@% lacks REPLICATION SLAVE")
	assert.Contains(t, line, "BINLOG MONITOR")
	assert.Contains(t, line, "has SELECT on shop.outbox")
	fix := fixOf(t, line)
	assert.Equal(t, "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'app'@'%';", fix)
	assert.NotEmpty(t, v.line("OK", "outbox table shop.outbox"), "SELECT on shop.* is enough for the table")
	assert.NotContains(t, v.out, password, "the password is never printed")

	e.Exec(fix)
	v = runValidate(t, pw, args...)
	assert.Contains(t, v.line("OK", "privileges"), "app@% has REPLICATION SLAVE, BINLOG MONITOR, SELECT on shop.outbox")
	assert.Equal(t, 0, v.code)

	t.Run("no SELECT on the outbox table", func(t *testing.T) {
		e.Exec("CREATE USER 'repl'@'%' IDENTIFIED BY '" + password + "'")
		e.Exec("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'repl'@'%'")
		args := harness.ArgsWith(e.Args("repl"), "--mysql-user", "repl")
		v := runValidate(t, pw, args...)
		assert.Equal(t, 2, v.code, "an outbox table the user cannot see stops run with exit 2")
		fix := "GRANT SELECT ON `shop`.`outbox` TO 'repl'@'%';"
		assert.Equal(t, fix, fixOf(t, v.line("FAIL", "privileges")))
		assert.Equal(t, fix, fixOf(t, v.line("FAIL", "outbox table shop.outbox")))
		e.Exec(fix)
		v = runValidate(t, pw, args...)
		assert.Equal(t, 0, v.code)
	})

	t.Run("wrong password", func(t *testing.T) {
		v := runValidate(t, []string{"BINLOG_ROUTER_MYSQL_PASSWORD=wrong"}, args...)
		assert.Equal(t, 1, v.code)
		line := v.line("FAIL", "server")
		assert.Contains(t, line, "Access denied")
		assert.Contains(t, fixOf(t, line), "BINLOG_ROUTER_MYSQL_PASSWORD")
		assert.NotEmpty(t, v.line("OK", "kafka"), "the Kafka checks still run")
	})
}

// TestValidateOutboxTable: an outbox table without required columns fails
// naming every missing column and its --column-* flag; column types the
// router refuses with the flags given fail; a missing table fails with
// where to get its DDL.
func TestValidateOutboxTable(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec("CREATE TABLE thin_outbox (id BIGINT AUTO_INCREMENT PRIMARY KEY, event_id CHAR(36), aggregate_type VARCHAR(64), payload LONGTEXT)")
	e.Exec("CREATE TABLE odd_outbox (event_id INT PRIMARY KEY, aggregate_type VARCHAR(64), aggregate_id VARCHAR(64), event_type VARCHAR(64), payload LONGTEXT, created_at VARCHAR(32))")
	withTable := func(table string, extra ...string) []string {
		return harness.ArgsWith(e.Args("tables", extra...), "--outbox-table", table)
	}

	v := runValidate(t, nil, withTable("shop.thin_outbox")...)
	assert.Equal(t, 1, v.code)
	assertFailsHaveFixes(t, v)
	line := v.line("FAIL", "outbox table shop.thin_outbox")
	require.NotEmpty(t, line)
	assert.Contains(t, line, `no column "aggregate_id" for the aggregate id`)
	assert.Contains(t, line, `no column "event_type" for the event type`)
	assert.Contains(t, fixOf(t, line), "--column-aggregate-id, --column-event-type")
	assert.Contains(t, fixOf(t, line), "binlog-router schema --flavor mariadb --table shop.thin_outbox")

	t.Run("the --column flag fixes it", func(t *testing.T) {
		v := runValidate(t, nil, withTable("shop.thin_outbox", "--column-aggregate-id", "id", "--column-event-type", "aggregate_type")...)
		// aggregate_type cannot serve two fields: a configuration error.
		assert.Equal(t, 2, v.code)
		assert.Contains(t, v.line("FAIL", "configuration"), "--column-event-type")
		e.Exec("ALTER TABLE thin_outbox ADD COLUMN kind VARCHAR(64)")
		v = runValidate(t, nil, withTable("shop.thin_outbox", "--column-aggregate-id", "id", "--column-event-type", "kind")...)
		assert.Equal(t, 0, v.code)
		assert.Contains(t, v.line("OK", "outbox column types shop.thin_outbox"), "id bigint(20)")
	})

	t.Run("types the flags refuse fail", func(t *testing.T) {
		v := runValidate(t, nil, withTable("shop.odd_outbox")...)
		assert.Equal(t, 1, v.code)
		line := v.line("FAIL", "outbox column types shop.odd_outbox")
		assert.Contains(t, line, "event_id (the event id) is int(11): a number is not a UUID, so --require-uuid refuses every row")
		assert.Contains(t, line, "created_at (the creation time) is varchar(32)")
		assert.Contains(t, fixOf(t, line), "--require-uuid=false")
		assert.Contains(t, fixOf(t, line), "set --column-created-at to a column name the table does not have")

		v = runValidate(t, nil, withTable("shop.odd_outbox", "--require-uuid=false", "--column-created-at=no_such_column")...)
		assert.Equal(t, 0, v.code)
		assert.Contains(t, v.line("OK", "outbox column types shop.odd_outbox"), "event_id int(11) (a number is not a UUID; published as it is (--require-uuid=false))")
	})

	t.Run("missing table", func(t *testing.T) {
		v := runValidate(t, nil, withTable("shop.nothere")...)
		assert.Equal(t, 2, v.code, "a configured table that does not exist is configuration, as for run")
		line := v.line("FAIL", "outbox table shop.nothere")
		assert.Contains(t, line, "does not exist")
		assert.Contains(t, fixOf(t, line), "binlog-router schema")
	})
}

// TestValidateCheckpointTopic: a checkpoint topic that would delete the
// checkpoint, or has more than one partition, fails with the fix.
func TestValidateCheckpointTopic(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	adm := e.Admin()
	ctx := context.Background()
	create := func(topic string, partitions int32, policy string) {
		resp, err := adm.CreateTopic(ctx, partitions, 1, map[string]*string{"cleanup.policy": &policy}, topic)
		require.NoError(t, err)
		require.NoError(t, resp.Err)
	}

	deleting := e.Prefix + "_deleting"
	create(deleting, 1, "delete")
	v := runValidate(t, nil, harness.ArgsWith(e.Args("topic"), "--checkpoint-topic", deleting)...)
	assert.Equal(t, 1, v.code)
	assertFailsHaveFixes(t, v)
	line := v.line("FAIL", "checkpoint topic")
	assert.Contains(t, line, "cleanup.policy=delete")
	assert.Contains(t, fixOf(t, line), "--entity-name "+deleting+" --add-config cleanup.policy=compact")

	partitioned := e.Prefix + "_partitioned"
	create(partitioned, 3, "compact")
	v = runValidate(t, nil, harness.ArgsWith(e.Args("topic"), "--checkpoint-topic", partitioned)...)
	assert.Equal(t, 1, v.code)
	line = v.line("FAIL", "checkpoint topic")
	assert.Contains(t, line, "3 partitions")
	assert.Contains(t, fixOf(t, line), "--partitions 1 --config cleanup.policy=compact")
}

// TestValidateRetentionAndPurge: the checkpoint's age is compared with the
// binlog retention, and a checkpoint whose binlog was purged fails naming
// the purged GTIDs; so does --start earliest once the first binlog is gone.
func TestValidateRetentionAndPurge(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.InsertTx(harness.NewEvent("r-1", "Kept", `{}`))
	topic := e.CheckpointTopic()
	cl := e.KafkaClient()
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, map[string]*string{"cleanup.policy": ptr("compact")}, topic)
	require.NoError(t, err)
	require.NoError(t, resp.Err)
	pos := e.GTIDPos()
	writeCheckpoint := func(name, set string, age time.Duration) {
		t.Helper()
		cp := checkpoint.Checkpoint{Name: name, GTIDSet: set, Flavor: "mariadb", ServerID: 1, Time: time.Now().Add(-age)}
		rec, err := cp.Record(topic)
		require.NoError(t, err)
		require.NoError(t, cl.ProduceSync(context.Background(), rec).FirstErr())
	}

	e.Exec("SET GLOBAL binlog_expire_logs_seconds = 86400")
	writeCheckpoint("fresh", pos, time.Minute)
	writeCheckpoint("aging", pos, 13*time.Hour)
	writeCheckpoint("old", pos, 50*time.Hour)

	v := runValidate(t, nil, e.Args("fresh")...)
	assert.Equal(t, 0, v.code)
	line := v.line("WARN", "binlog retention")
	assert.Regexp(t, `^WARN binlog retention: binlogs are kept 24.0h \(binlog_expire_logs_seconds=86400\); the checkpoint is 1m\d+s old, but a router stopped longer than 24.0h \(a weekend\) finds the binlogs after it purged`, line)
	assert.Contains(t, fixOf(t, line), "binlog-router recover --since-checkpoint")

	v = runValidate(t, nil, e.Args("aging")...)
	assert.Equal(t, 0, v.code)
	assertFailsHaveFixes(t, v)
	line = v.line("WARN", "binlog retention")
	assert.Contains(t, line, "more than half")
	assert.Contains(t, fixOf(t, line), "start the router before")

	v = runValidate(t, nil, e.Args("old")...)
	assert.Equal(t, 1, v.code)
	line = v.line("FAIL", "binlog retention")
	assert.Contains(t, line, "written 2.1d ago")
	assert.Contains(t, fixOf(t, line), "binlog_expire_logs_seconds")
	e.Exec("SET GLOBAL binlog_expire_logs_seconds = 0")

	// Purge the binlog holding the transactions after "fresh".
	seq := harness.GTIDSeqs(t, pos)[0]
	e.InsertTx(harness.NewEvent("r-2", "Lost", `{}`))
	e.InsertTx(harness.NewEvent("r-3", "Lost", `{}`))
	last := e.GTIDPos()
	e.Exec("FLUSH BINARY LOGS")
	newest := e.NewestBinlog()
	e.PurgeBinlogsTo(newest)

	v = runValidate(t, nil, e.Args("fresh")...)
	assert.Equal(t, 3, v.code, "the checkpoint's binlog was purged: run would exit 3")
	assertFailsHaveFixes(t, v)
	line = v.line("FAIL", "binlog position")
	require.NotEmpty(t, line)
	assert.Contains(t, line, fmt.Sprintf("the oldest binlog %s starts after [%s], but the router would start after the checkpoint [%s]", newest, last, pos))
	assert.Contains(t, line, fmt.Sprintf("domain 0 seq %d to %d (up to %s) purged", seq+1, seq+2, last))
	assert.Contains(t, fixOf(t, line), "republish them from the outbox table")
	assert.Contains(t, fixOf(t, line), "binlog-router checkpoint set --name fresh --gtid "+last)
	// The printed fix works.
	out, err := exec.Command(harness.RouterBin, append([]string{"checkpoint", "set"}, e.Args("fresh", "--gtid", last)...)...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	v = runValidate(t, nil, e.Args("fresh")...)
	assert.Equal(t, 0, v.code)
	assert.Contains(t, v.line("OK", "binlog position"), "after the checkpoint ["+last+"]")

	v = runValidate(t, nil, e.Args("nocheckpoint")...)
	assert.Equal(t, 0, v.code, "run --start earliest starts at the oldest binlog once the first is gone")
	line = v.line("WARN", "binlog position")
	assert.Contains(t, line, fmt.Sprintf("the oldest binlog %s starts after [%s]", newest, last))
	assert.Contains(t, line, "outbox rows of the purged transactions are not published")
	assert.Contains(t, fixOf(t, line), "republish them from the outbox table")

	v = runValidate(t, nil, e.Args("nocheckpoint", "--start", "gtid:"+pos)...)
	assert.Equal(t, 2, v.code, "a --start whose binlog is gone is refused by run: configuration")
	assert.Contains(t, fixOf(t, v.line("FAIL", "binlog position")), "--start gtid:"+last)

	v = runValidate(t, nil, e.Args("nocheckpoint", "--start", "gtid:"+last)...)
	assert.Equal(t, 0, v.code, "the printed --start works")
	v = runValidate(t, nil, e.Args("nocheckpoint", "--start", "latest")...)
	assert.Equal(t, 0, v.code)
}

// TestValidateUnreachable: an unreachable server or cluster fails fast,
// once each, instead of hanging or failing every dependent check.
func TestValidateUnreachable(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	closed := closedAddr(t)
	v := runValidate(t, nil, harness.ArgsWith(harness.ArgsWith(e.Args("gone"), "--mysql-addr", closed), "--kafka-brokers", closed)...)
	assert.Equal(t, 1, v.code)
	assertFailsHaveFixes(t, v)
	assert.Equal(t, map[string]string{"server": "FAIL", "kafka": "FAIL"}, v.statuses())
	assert.Contains(t, fixOf(t, v.line("FAIL", "server")), "--mysql-addr")
	assert.Contains(t, fixOf(t, v.line("FAIL", "kafka")), "--kafka-brokers")
	assert.Less(t, v.took, 40*time.Second, "bounded by the per-check timeout")
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestValidateThreeBrokers: on the shared three-node cluster (replication
// factor 3, min.insync.replicas=2 everywhere) every replication check and
// the transactions check pass, for topics that exist (after a router ran)
// and for those the brokers will create; an outbox topic that a broker
// loss would stop (min.insync.replicas equal to its replication factor)
// or that one broker holds alone warns, naming the topic and the command
// that fixes it.
func TestValidateThreeBrokers(t *testing.T) {
	k := harness.SharedCluster3(t)
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	args := e.Args("val3", "--on-invalid", "dead-letter", "--dead-letter-topic", e.Prefix+"_dead")

	v := runValidate(t, nil, args...)
	require.Equal(t, 0, v.code)
	assertFailsHaveFixes(t, v)
	for _, name := range []string{"kafka transactions", "replication outbox topics", "replication checkpoint topic",
		"replication dead-letter topic", "replication transaction log"} {
		assert.NotEmpty(t, v.line("OK", name), "%s OK on three brokers", name)
	}
	assert.Contains(t, v.line("OK", "replication outbox topics"), "no topic matches "+e.Prefix+".{event_type} yet")
	assert.Contains(t, v.line("OK", "replication outbox topics"), "replication factor 3, min.insync.replicas 2: survives the loss of one broker")
	assert.Contains(t, v.line("OK", "replication checkpoint topic"), "the router creates it with replication factor 3")
	assert.Contains(t, v.line("OK", "replication transaction log"), "transaction.state.log.replication.factor 3, transaction.state.log.min.isr 2")

	r := harness.StartRouter(t, args...)
	writeEvents(e, "Created", 2)
	harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(2, time.Minute)
	e.WaitCheckpoint("val3", e.GTIDPos())
	require.Equal(t, 0, r.Stop(20*time.Second))
	v = runValidate(t, nil, args...)
	require.Equal(t, 0, v.code)
	assert.Contains(t, v.line("OK", "replication outbox topics"), e.Prefix+".Created: replication factor 3, min.insync.replicas 2")
	assert.Contains(t, v.line("OK", "replication checkpoint topic"), e.Prefix+"_checkpoints: replication factor 3, min.insync.replicas 2")
	assert.Contains(t, v.line("OK", "replication transaction log"), "__transaction_state: replication factor 3, min.insync.replicas 2")

	adm := e.Admin()
	three := "3"
	res, err := adm.CreateTopics(context.Background(), 1, 3, map[string]*string{"min.insync.replicas": &three}, e.Prefix+".Strict")
	require.NoError(t, err)
	require.NoError(t, res.Error())
	one := "1"
	res, err = adm.CreateTopics(context.Background(), 1, 1, map[string]*string{"min.insync.replicas": &one}, e.Prefix+".Single")
	require.NoError(t, err)
	require.NoError(t, res.Error())
	v = runValidate(t, nil, args...)
	require.Equal(t, 0, v.code, "warnings only")
	assertFailsHaveFixes(t, v)
	line := v.line("WARN", "replication outbox topics")
	require.NotEmpty(t, line)
	assert.Contains(t, line, e.Prefix+".Single: replication factor 1")
	assert.Contains(t, line, e.Prefix+".Strict: replication factor 3, min.insync.replicas 3: losing one broker stops writes (NOT_ENOUGH_REPLICAS)")
	assert.Contains(t, line, e.Prefix+".Created: replication factor 3, min.insync.replicas 2")
	assert.Contains(t, fixOf(t, line), "--entity-name "+e.Prefix+".Single")

	// One replica under the cluster's min.insync.replicas=2: Kafka counts
	// min.insync.replicas only up to the replication factor, so it accepts
	// acks=all writes that one broker holds alone; validate says so.
	res, err = adm.CreateTopics(context.Background(), 1, 1, nil, e.Prefix+".Lone")
	require.NoError(t, err)
	require.NoError(t, res.Error())
	require.NoError(t, produceOnce(e, e.Prefix+".Lone"), "an acks=all write to one replica under min.insync.replicas=2")
	v = runValidate(t, nil, args...)
	require.Equal(t, 0, v.code)
	assert.Contains(t, v.line("WARN", "replication outbox topics"), e.Prefix+".Lone: replication factor 1, min.insync.replicas 2 (in effect 1: Kafka counts it up to the replication factor): a write is acknowledged once one broker has it")
}

package test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/test/harness"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// withOutbox replaces the --outbox-table of args.
func withOutbox(args []string, table string, extra ...string) []string {
	return append(harness.ArgsWith(args, "--outbox-table", table), extra...)
}

// TestRunRefusesMissingTable: a mistyped, wrongly cased or wrongly placed
// --outbox-table stops run with exit 2 naming the near miss, and
// validate fails on it the same way; nothing is checkpointed.
func TestRunRefusesMissingTable(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.Exec("CREATE DATABASE app")
	base := e.Args("missing")
	for _, tc := range []struct{ table, near string }{
		{"shop.outbx", "shop.outbox"},
		{"shop.OUTBOX", "shop.outbox"},
		{"app.outbox", "shop.outbox"},
	} {
		args := withOutbox(base, tc.table)
		res := harness.RunCLI(t, append([]string{"run"}, args...)...)
		assert.Equal(t, 2, res.Code, "run --outbox-table %s: %s", tc.table, res.Stderr)
		assert.Contains(t, res.Stderr, "outbox table "+tc.table+" does not exist on the server, but "+tc.near+" does", tc.table)
		assert.Contains(t, res.Stderr, "correct --outbox-table", tc.table)
		assert.NotContains(t, res.Stderr, "no checkpoint stored", "refused before reading the binlog")

		res = harness.RunCLI(t, append(append([]string{"run"}, args...), "--allow-missing-table")...)
		assert.Equal(t, 2, res.Code, "--allow-missing-table does not cover a near miss (%s): %s", tc.table, res.Stderr)

		v := runValidate(t, nil, args...)
		assert.Equal(t, 2, v.code, "validate exits as run: %s", tc.table)
		line := v.line("FAIL", "outbox table "+tc.table)
		assert.Contains(t, line, "but "+tc.near+" does", "validate agrees with run")
	}
	res := harness.RunCLI(t, append([]string{"run"}, withOutbox(base, "shop.invoices_out")...)...)
	assert.Equal(t, 2, res.Code, res.Stderr)
	assert.Contains(t, res.Stderr, "binlog-router schema --flavor mariadb --table shop.invoices_out")
	assert.Contains(t, res.Stderr, "--allow-missing-table")
	v := runValidate(t, nil, withOutbox(base, "shop.invoices_out", "--allow-missing-table")...)
	assert.NotEmpty(t, v.line("WARN", "outbox table shop.invoices_out"), "validate --allow-missing-table warns:\n%s", v.out)
}

// TestAllowMissingTable: with --allow-missing-table the router starts
// before its table exists and routes the table's rows once it is created;
// a table with a name close to it that is created first stops it with
// exit 2, the checkpoint before that transaction.
func TestAllowMissingTable(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	args := withOutbox(e.Args("later", "--idle-checkpoint", "200ms"), "shop.events_out", "--allow-missing-table")
	r := harness.StartRouter(t, args...)
	require.NoError(t, r.WaitLog(ctxTimeout(t, 30*time.Second), "outbox table does not exist yet"))
	require.NoError(t, r.WaitLog(ctxTimeout(t, 30*time.Second), "no checkpoint stored"))
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	writeEvents(e, "OtherTable", 2) // shop.outbox is not configured here
	e.Exec("CREATE TABLE events_out LIKE outbox")
	var ids []string
	for i := range 3 {
		ev := harness.NewEvent("agg-later", "Later", fmt.Sprintf(`{"i":%d}`, i))
		_, err := e.DB.Exec("INSERT INTO events_out (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES (?, ?, ?, ?, ?)",
			ev.ID, ev.AggType, ev.AggID, ev.Type, *ev.Payload)
		require.NoError(t, err)
		ids = append(ids, ev.ID)
	}
	got := c.Read(len(ids), time.Minute)
	assert.ElementsMatch(t, ids, harness.RecordIDs(got), "the table created after start is routed")
	e.WaitCheckpoint("later", e.GTIDPos())
	before := e.GTIDPos()

	e.Exec("CREATE TABLE Events_Out LIKE outbox")
	code := r.Wait(time.Minute)
	assert.Equal(t, 2, code, "a table with a close name stops the router")
	assert.Contains(t, r.Out.String(), "table shop.Events_Out, whose name is close to it")
	assert.Equal(t, before, e.CheckpointSet("later"), "the checkpoint did not pass the CREATE")
	t.Logf("consumer read %d of %d rows of the late table; exit %d at the close name", len(got), len(ids), code)
}

// TestStartValidated: --start is checked on the server as checkpoint set
// checks a set; every refusal is exit 2 and publishes nothing.
func TestStartValidated(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	writeEvents(e, "Before", 2)
	pos := e.GTIDPos()
	base := e.Args("start")
	for _, tc := range []struct {
		start string
		want  []string
	}{
		{"gtid:", []string{"empty GTID set", "--start earliest"}},
		{"gtid:garbage", []string{"invalid --start", "server's syntax"}},
		{"gtid:" + pos + ",7-1-3", []string{"beyond what the server has executed", "7-1-3", "correct --start"}},
		{"gtid:0-1-999999", []string{"beyond what the server has executed"}},
		{"LATEST", []string{"use earliest, latest or gtid:<set>"}},
	} {
		res := harness.RunCLI(t, append(append([]string{"run"}, base...), "--start", tc.start)...)
		assert.Equal(t, 2, res.Code, "--start %s: %s", tc.start, res.Stderr)
		for _, w := range tc.want {
			assert.Contains(t, res.Stderr, w, "--start %s", tc.start)
		}
	}
	for _, set := range []string{"garbage", "0-1-999999"} {
		res := harness.RunCLI(t, append(append([]string{"checkpoint", "set"}, base...), "--gtid", set)...)
		assert.Equal(t, 2, res.Code, "checkpoint set --gtid %s: %s", set, res.Stderr)
	}
	res := harness.RunCLI(t, append(append([]string{"checkpoint", "set"}, base...), "--from-debezium-offset", "not json")...)
	assert.Equal(t, 2, res.Code, res.Stderr)
	res = harness.RunCLI(t, append([]string{"replay", "--dry-run", "--from-gtid", "garbage"}, base...)...)
	assert.Equal(t, 2, res.Code, res.Stderr)
	_, err := e.Checkpoint("start")
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing, "nothing checkpointed")

	// A valid set: the router publishes what comes after it.
	r := harness.StartRouter(t, append(append([]string(nil), base...), "--start", "gtid:"+pos)...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	after := writeEvents(e, "After", 2)
	got := c.Read(len(after), time.Minute)
	got = append(got, c.Quiet(time.Second)...)
	assert.ElementsMatch(t, after, harness.RecordIDs(got), "--start gtid:<pos> publishes only what follows")
	require.Equal(t, 0, r.Stop(20*time.Second))
}

// TestStartEarliestAfterPurge: --start earliest after a purge starts at
// the oldest binlog, logging that position and that older transactions
// are gone; replay --from-gtid "" reads the same range.
func TestStartEarliestAfterPurge(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	purged := writeEvents(e, "Purged", 3)
	e.Exec("FLUSH BINARY LOGS")
	kept := writeEvents(e, "Kept", 2)
	newest := e.NewestBinlog()
	e.PurgeBinlogsTo(newest)

	res := harness.RunCLI(t, append([]string{"replay", "--dry-run", "--from-gtid", ""}, e.Args("earliest")...)...)
	require.Equal(t, 0, res.Code, res.Stderr)
	lines := strings.Count(strings.TrimSpace(res.Stdout), "\n") + 1
	assert.Equal(t, len(kept), lines, "replay --from-gtid \"\" prints the records of the oldest binlog on: %s", res.Stdout)
	assert.Contains(t, res.Stderr, "purged and are gone")

	r := harness.StartRouter(t, e.Args("earliest", "--start", "earliest")...)
	require.NoError(t, r.WaitLog(ctxTimeout(t, 30*time.Second), "purged and are gone"))
	assert.Contains(t, r.Out.String(), newest, "the log names the oldest binlog")
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	got := c.Read(len(kept), time.Minute)
	got = append(got, c.Quiet(time.Second)...)
	assert.ElementsMatch(t, kept, harness.RecordIDs(got), "only the rows still in the binlog")
	t.Logf("--start earliest after a purge: consumer read %d (%d purged before start)", len(got), len(purged))
	require.Equal(t, 0, r.Stop(20*time.Second))
}

// TestExitCodes brings about each cause of docs/exit-codes.md for
// real and checks the code of every command it concerns: 0 a clean stop or
// done, 1 any other error, 2 bad usage or configuration (flags, outbox
// tables, --start, GTID sets, server settings), 3 the checkpoint's binlog
// purged. Elsewhere: 1 fenced (TestSecondRouterFences) and a row the
// router stops before (TestLayoutUnknownStops), 2 a server setting
// changed at runtime (TestSettingsChangedAtRuntime,
// TestRowMetadataChangedAtRuntime), 4 a shutdown drain past
// --shutdown-timeout (TestShutdownTimeoutExitCode).
func TestExitCodes(t *testing.T) {
	e := kfakeEnv(t)
	writeEvents(e, "Before", 2)
	base := e.Args("codes")
	with := func(flag, value string) []string { return harness.ArgsWith(base, flag, value) }
	// cmd is the command line `binlog-router <command words> args extra`.
	cmd := func(command string, args []string, extra ...string) []string {
		return append(append(strings.Fields(command), args...), extra...)
	}
	serverSetting := func() func() {
		e.Exec("SET GLOBAL binlog_format=STATEMENT") // new sessions, like the router's, take it
		return func() { e.Exec("SET GLOBAL binlog_format=ROW") }
	}
	for _, tc := range []struct {
		cause string
		argv  []string
		setup func() (undo func())
		code  int
		want  string // in stdout or stderr
	}{
		{"help", []string{"help"}, nil, 0, "Usage:"},
		{"version", []string{"version"}, nil, 0, "binlog-router"},
		{"validate: every check passes", cmd("validate", base), nil, 0, "ready to run"},
		{"no command", nil, nil, 2, "Usage:"},
		{"unknown command", []string{"frobnicate"}, nil, 2, `unknown command "frobnicate"`},
		{"unknown flag", cmd("run", base, "--no-such-flag"), nil, 2, "no-such-flag"},
		{"malformed flag value", cmd("run", base, "--commit-records", "many"), nil, 2, "commit-records"},
		{"invalid configuration", cmd("run", base, "--delivery", "sometimes"), nil, 2, "delivery"},
		{"invalid configuration: validate", cmd("validate", base, "--delivery", "sometimes"), nil, 2, "FAIL configuration"},
		{"--start the server never had", cmd("run", base, "--start", "gtid:0-1-999999"), nil, 2, "correct --start"},
		{"--start malformed", cmd("run", base, "--start", "gtid:garbage"), nil, 2, "invalid --start"},
		{"missing outbox table", cmd("run", with("--outbox-table", "shop.outbx")), nil, 2, "but shop.outbox does"},
		{"missing outbox table: validate", cmd("validate", with("--outbox-table", "shop.outbx")), nil, 2, "FAIL outbox table shop.outbx"},
		{"GTID set refused: checkpoint set", cmd("checkpoint set", base, "--gtid", "garbage"), nil, 2, "garbage"},
		{"GTID set refused: replay", cmd("replay", base, "--dry-run", "--from-gtid", "garbage"), nil, 2, "--from-gtid"},
		{"server setting at start", cmd("run", base), serverSetting, 2, "binlog_format is STATEMENT"},
		{"server setting at start: validate", cmd("validate", base), serverSetting, 2, "FAIL binlog_format"},
		{"access denied", cmd("run", with("--mysql-user", "nobody")), nil, 1, "Access denied"},
		{"access denied: validate", cmd("validate", with("--mysql-user", "nobody")), nil, 1, "Access denied"},
		{"Kafka unreachable: validate", cmd("validate", with("--kafka-brokers", closedAddr(t))), nil, 1, "FAIL kafka"},
	} {
		undo := func() {}
		if tc.setup != nil {
			undo = tc.setup()
		}
		res := harness.RunCLI(t, tc.argv...)
		undo()
		out := res.Stdout + res.Stderr
		assert.Equal(t, tc.code, res.Code, "%s: %s", tc.cause, harness.Tail(out, 5))
		assert.Contains(t, out, tc.want, tc.cause)
		t.Logf("%-40s exit %d", tc.cause, res.Code)
	}
	_, err := e.Checkpoint("codes")
	assert.ErrorIs(t, err, checkpoint.ErrCheckpointMissing, "no command above stored a checkpoint")

	t.Run("SIGTERM", func(t *testing.T) {
		r := harness.StartRouter(t, base...)
		require.NoError(t, r.WaitLog(ctxTimeout(t, time.Minute), "no checkpoint stored"))
		assert.Equal(t, 0, r.Stop(30*time.Second), "run")

		// A replay stopped while Kafka holds its produce request (until
		// the test ends): it gives up the open transaction (after its
		// 10 s abort timeout) and exits 0, saying from where to go on.
		held, _ := holdProduce(t, e)
		rp := harness.StartCommand(t, "replay", append(append([]string(nil), base...), "--from-gtid", "", "--topic-prefix", "again.")...)
		select {
		case <-held:
		case <-time.After(time.Minute):
			t.Fatalf("no produce request of the replay reached the broker:\n%s", harness.Tail(rp.Out.String(), 10))
		}
		code := rp.Stop(time.Minute)
		assert.Equal(t, 0, code, "replay")
		assert.Contains(t, rp.Out.String(), "stopped by a signal before the end of the range; replay again with --from-gtid")
		t.Logf("SIGTERM: run exit 0, replay exit %d: %s", code, harness.LineWith(rp.Out.String(), "replay:"))
	})

	t.Run("checkpoint's binlog purged", func(t *testing.T) {
		pos := e.GTIDPos()
		res := harness.RunCLI(t, cmd("checkpoint set", with("--name", "purged"), "--gtid", pos)...)
		require.Equal(t, 0, res.Code, res.Stderr)
		writeEvents(e, "Purged", 2)
		e.Exec("FLUSH BINARY LOGS")
		e.PurgeBinlogsTo(e.NewestBinlog())
		for _, command := range []string{"run", "validate"} {
			res := harness.RunCLI(t, cmd(command, with("--name", "purged"))...)
			out := res.Stdout + res.Stderr
			assert.Equal(t, 3, res.Code, "%s: %s", command, harness.Tail(out, 5))
			assert.Contains(t, out, "purged", command)
			t.Logf("%-40s exit %d", "checkpoint's binlog purged: "+command, res.Code)
		}
	})
}

// holdProduce makes the in-process kfake broker hold every produce
// request until release is called or the test ends; held is signalled
// when the first one arrives.
func holdProduce(t testing.TB, e *harness.Env) (held <-chan struct{}, release func()) {
	c := e.Kafka.Cluster
	stop, arrived := make(chan struct{}), make(chan struct{}, 1)
	var once sync.Once
	release = func() { once.Do(func() { close(stop) }) }
	t.Cleanup(release)
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		select {
		case <-stop:
			return nil, nil, false
		default:
		}
		select {
		case arrived <- struct{}{}:
		default:
		}
		c.SleepControl(func() { <-stop })
		return nil, nil, false
	})
	return arrived, release
}

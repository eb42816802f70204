package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// yamlConfig is a YAML config file with everything e.args sets.
func yamlConfig(e *harness.Env, name string, serverID int) string {
	brokers := make([]string, len(e.Kafka.Brokers))
	for i, b := range e.Kafka.Brokers {
		brokers[i] = fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf(`# binlog-router config
mysql-addr: %s
mysql-user: root
kafka-brokers: [%s]
outbox-table:
  - %s.outbox
topic-template: "%s.{event_type}"
checkpoint-topic: %s_checkpoints
name: %s
log-format: json
server-id: %d
commit-interval: 100ms
validate-json: true
`, e.Maria.Addr(), strings.Join(brokers, ", "), e.DBName, e.Prefix, e.Prefix, name, serverID)
}

// tomlConfig is yamlConfig in TOML.
func tomlConfig(e *harness.Env, name string, serverID int) string {
	brokers := make([]string, len(e.Kafka.Brokers))
	for i, b := range e.Kafka.Brokers {
		brokers[i] = fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf(`# binlog-router config
mysql-addr = %q
mysql-user = "root"
kafka-brokers = [%s]
outbox-table = ["%s.outbox"]
topic-template = "%s.{event_type}"
checkpoint-topic = "%s_checkpoints"
name = %q
log-format = "json"
server-id = %d
commit-interval = "100ms"
validate-json = true
`, e.Maria.Addr(), strings.Join(brokers, ", "), e.DBName, e.Prefix, e.Prefix, name, serverID)
}

func writeConfig(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// TestConfigFileRoutes: a YAML file given with --config and a TOML file
// given with BINLOG_ROUTER_CONFIG each drive a real run with no other
// flag, and `checkpoint show` reads the same file (ignoring its run-only
// keys) to find the checkpoint.
func TestConfigFileRoutes(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	evs := []harness.Event{harness.NewEvent("cf-1", "ConfigFileRouted", `{"n":1}`), harness.NewEvent("cf-2", "ConfigFileRouted", `{"n":2}`)}
	e.InsertTx(evs...)
	c := harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex())
	var got []string

	for i, f := range []struct {
		format, file string
		viaEnv       bool
	}{
		{"yaml", writeConfig(t, "router.yaml", yamlConfig(e, "from-yaml", 3101)), false},
		{"toml", writeConfig(t, "router.toml", tomlConfig(e, "from-toml", 3102)), true},
	} {
		var r *harness.Router
		if f.viaEnv {
			r = harness.StartRouterEnv(t, []string{"BINLOG_ROUTER_CONFIG=" + f.file})
		} else {
			r = harness.StartRouter(t, "--config", f.file)
		}
		recs := c.Read(len(evs), 60*time.Second)
		got = append(got, harness.RecordIDs(recs)...)
		out := checkpointShowConfig(t, f.file, "", 30*time.Second)
		assert.Contains(t, out, `"name": "from-`+f.format+`"`, f.format)
		require.Equal(t, 0, r.Stop(20*time.Second), f.format)
		assert.Contains(t, r.Out.String(), "binlog-router starting", f.format)
		if i == 0 {
			assert.ElementsMatch(t, []string{evs[0].ID, evs[1].ID}, got, "yaml run")
		}
	}
	// Each run started from the earliest position under its own name.
	assert.ElementsMatch(t, []string{evs[0].ID, evs[1].ID, evs[0].ID, evs[1].ID}, got)
}

// TestConfigFilePrecedence: --name set in the file, the environment and on
// the command line: the flag wins over env, env over the file, the file
// over the default; each run's checkpoint is stored under the winning
// name, seen with `checkpoint show`.
func TestConfigFilePrecedence(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	e.InsertTx(harness.NewEvent("p-1", "Precedence", `{}`))
	file := writeConfig(t, "router.yaml", yamlConfig(e, "from-file", 3201))
	envName := []string{"BINLOG_ROUTER_NAME=from-env"}
	for _, step := range []struct {
		args    []string
		env     []string
		want    string
		missing []string // names without a checkpoint yet
	}{
		{[]string{"--config", file, "--name", "from-flag"}, envName, "from-flag", []string{"from-env", "from-file"}},
		{[]string{"--config", file}, envName, "from-env", []string{"from-file"}},
		{[]string{"--config", file}, nil, "from-file", nil},
	} {
		r := harness.StartRouterEnv(t, step.env, step.args...)
		out := checkpointShowConfig(t, file, step.want, 60*time.Second)
		assert.Contains(t, out, `"name": "`+step.want+`"`)
		require.Equal(t, 0, r.Stop(20*time.Second), step.want)
		for _, n := range step.missing {
			cmd := exec.Command(harness.RouterBin, "checkpoint", "show", "--config", file, "--name", n)
			out, err := cmd.CombinedOutput()
			assert.Error(t, err, "no checkpoint under %q after the %q run: %s", n, step.want, out)
		}
	}
	// The default (binlog-router) never got a checkpoint.
	_, err := exec.Command(harness.RouterBin, "checkpoint", "show", "--config", file, "--name", "binlog-router").CombinedOutput()
	assert.Error(t, err)
}

// TestConfigFileErrors: an unknown key, a bad value or a nested table is a
// usage error (exit 2) naming the file and the key, and suggesting the
// flag meant; no connection is attempted.
func TestConfigFileErrors(t *testing.T) {
	for _, c := range []struct {
		name, content string
		want          []string
	}{
		{"typo.yaml", "mysql-addr: 127.0.0.1:1\nmysql-adr: 127.0.0.1:3306\n",
			[]string{`typo.yaml:2: unknown key "mysql-adr"`, `did you mean "mysql-addr"?`}},
		{"underscore.toml", "outbox_table = [\"shop.outbox\"]\n",
			[]string{"underscore.toml", `unknown key "outbox_table"`, `did you mean "outbox-table"?`}},
		{"badvalue.yaml", "commit-interval: fast\n",
			[]string{"badvalue.yaml:1", `key "commit-interval": invalid value "fast"`}},
		{"nested.yaml", "mysql:\n  addr: x\n",
			[]string{"nested.yaml", `key "mysql": nested mappings are not supported`}},
		{"list.toml", "name = [\"a\", \"b\"]\n",
			[]string{"list.toml", `key "name": takes one value, not a list`}},
		{"router.json", "{}", []string{`unknown format ".json"`}},
	} {
		file := writeConfig(t, c.name, c.content)
		for _, cmdArgs := range [][]string{{"run"}, {"checkpoint", "show"}} {
			cmd := exec.Command(harness.RouterBin, append(cmdArgs, "--config", file)...)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "%s %v", c.name, cmdArgs)
			assert.Equal(t, 2, cmd.ProcessState.ExitCode(), "%s %v: %s", c.name, cmdArgs, out)
			for _, w := range c.want {
				assert.Contains(t, string(out), w, "%s %v", c.name, cmdArgs)
			}
		}
	}
}

// checkpointShowConfig runs `binlog-router checkpoint show --config file`
// (with --name if not empty) until it prints a checkpoint or the timeout
// passes.
func checkpointShowConfig(t *testing.T, file, name string, timeout time.Duration) string {
	t.Helper()
	args := []string{"--config", file}
	if name != "" {
		args = append(args, "--name", name)
	}
	return checkpointShowUntil(t, timeout, args...)
}

package config

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/schema"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// load runs Load on the flags of `run` (or, with connOnly, of a command
// that takes only the connection flags) and returns the config.
func load(t *testing.T, connOnly bool, args ...string) (Config, error) {
	t.Helper()
	c := Default()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if connOnly {
		for _, f := range flagTable {
			if strings.HasPrefix(f.name, "mysql-") || strings.HasPrefix(f.name, "kafka-") || f.name == "name" || f.name == configFlag {
				f.bind(&c, fs, f.usage)
			}
		}
	} else {
		c.RegisterRun(fs)
	}
	err := Load(fs, args)
	return c, err
}

const yamlFile = `# comment
mysql-addr: db.internal:3306
outbox-table: [shop.outbox, billing.outbox]
kafka-brokers:
  - k1:9092
  - k2:9092
name: from-file
commit-interval: 250ms
commit-records: 500
validate-json: false
server-id: 4294967295
max-buffered-bytes: 33554432
topic-template: "events.{event_type}"
`

const tomlFile = `# comment
mysql-addr = "db.internal:3306"
outbox-table = ["shop.outbox", "billing.outbox"]
kafka-brokers = ["k1:9092", "k2:9092"]
name = "from-file"
commit-interval = "250ms"
commit-records = 500
validate-json = false
server-id = 4294967295
max-buffered-bytes = 33554432
topic-template = "events.{event_type}"
`

func TestLoadFileFormats(t *testing.T) {
	for name, content := range map[string]string{"c.yaml": yamlFile, "c.yml": yamlFile, "c.toml": tomlFile, "C.TOML": tomlFile} {
		t.Run(name, func(t *testing.T) {
			c, err := load(t, false, "--config", writeFile(t, name, content))
			require.NoError(t, err)
			assert.Equal(t, "db.internal:3306", c.MySQLAddr)
			assert.Equal(t, []string{"shop.outbox", "billing.outbox"}, c.OutboxTables)
			assert.Equal(t, []string{"k1:9092", "k2:9092"}, c.KafkaBrokers)
			assert.Equal(t, "from-file", c.Name)
			assert.Equal(t, 250*time.Millisecond, c.CommitInterval)
			assert.Equal(t, 500, c.CommitRecords)
			assert.False(t, c.ValidateJSON)
			assert.Equal(t, uint(4294967295), c.ServerID)
			assert.Equal(t, 32<<20, c.MaxBufferedBytes)
			assert.Equal(t, "events.{event_type}", c.TopicTemplate)
			assert.Equal(t, "root", c.MySQLUser, "not in the file: default")
		})
	}
}

func TestLoadPrecedence(t *testing.T) {
	file := writeFile(t, "c.yaml", yamlFile)

	c, err := load(t, false, "--config", file)
	require.NoError(t, err)
	assert.Equal(t, "from-file", c.Name, "file > default")

	t.Setenv("BINLOG_ROUTER_NAME", "from-env")
	t.Setenv("BINLOG_ROUTER_KAFKA_BROKERS", "e1:9092,e2:9092")
	t.Setenv("BINLOG_ROUTER_COMMIT_INTERVAL", "2s")
	c, err = load(t, false, "--config", file)
	require.NoError(t, err)
	assert.Equal(t, "from-env", c.Name, "env > file")
	assert.Equal(t, []string{"e1:9092", "e2:9092"}, c.KafkaBrokers, "env list replaces the file's, not appended")
	assert.Equal(t, 2*time.Second, c.CommitInterval)
	assert.Equal(t, []string{"shop.outbox", "billing.outbox"}, c.OutboxTables, "the file still fills the rest")

	c, err = load(t, false, "--config", file, "--name", "from-flag", "--kafka-brokers", "f1:9092", "--commit-interval", "3s")
	require.NoError(t, err)
	assert.Equal(t, "from-flag", c.Name, "flag > env")
	assert.Equal(t, []string{"f1:9092"}, c.KafkaBrokers)
	assert.Equal(t, 3*time.Second, c.CommitInterval)

	// The file named in the environment.
	t.Setenv("BINLOG_ROUTER_CONFIG", writeFile(t, "env.toml", "mysql-addr = \"env-file:3306\"\n"))
	c, err = load(t, false)
	require.NoError(t, err)
	assert.Equal(t, "env-file:3306", c.MySQLAddr)
	c, err = load(t, false, "--config", file)
	require.NoError(t, err)
	assert.Equal(t, "db.internal:3306", c.MySQLAddr, "--config beats BINLOG_ROUTER_CONFIG")
}

func TestLoadEmptyListAndBools(t *testing.T) {
	c, err := load(t, false, "--config", writeFile(t, "c.yaml", "kafka-brokers: []\nha: true\nauto-create-topics: false\n"))
	require.NoError(t, err)
	assert.Empty(t, c.KafkaBrokers, "an empty list empties the default")
	assert.True(t, c.HA)
	assert.False(t, c.AutoCreateTopics)
	c, err = load(t, false, "--config", writeFile(t, "c.yaml", ""))
	require.NoError(t, err, "an empty file is fine")
	assert.Equal(t, Default().KafkaBrokers, c.KafkaBrokers)
}

// A file written for `run` serves a command that lacks some of its flags:
// their keys are checked but not applied.
func TestLoadConnectionFlagsIgnoreRunKeys(t *testing.T) {
	c, err := load(t, true, "--config", writeFile(t, "c.yaml", yamlFile))
	require.NoError(t, err)
	assert.Equal(t, "from-file", c.Name)
	assert.Equal(t, []string{"k1:9092", "k2:9092"}, c.KafkaBrokers)
	assert.Nil(t, c.OutboxTables)

	_, err = load(t, true, "--config", writeFile(t, "c.yaml", "commit-interval: soon\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `key "commit-interval": invalid value "soon"`)
}

func TestLoadFileErrors(t *testing.T) {
	for _, c := range []struct {
		name, content string
		args          []string
		want          []string
	}{
		{"typo.yaml", "mysql-addr: x:1\nmysql-adr: y:1\n", nil, []string{`typo.yaml:2: unknown key "mysql-adr" (did you mean "mysql-addr"?)`}},
		{"typo.toml", "kafka_brokers = [\"a:1\"]\n", nil, []string{`typo.toml: unknown key "kafka_brokers" (did you mean "kafka-brokers"?)`}},
		{"far.yaml", "zzzzzzzzzzzz: 1\n", nil, []string{`unknown key "zzzzzzzzzzzz"; keys are the flag names`}},
		{"dup.yaml", "name: a\nname: b\n", nil, []string{`dup.yaml:2: key "name": appears twice`}},
		{"self.yaml", "config: other.yaml\n", nil, []string{`key "config": a config file cannot name another one`}},
		{"null.yaml", "name:\n", nil, []string{`line 1: key "name" has no value`}},
		{"nested.yaml", "mysql:\n  addr: x\n", nil, []string{`key "mysql": nested mappings are not supported`}},
		{"nested.toml", "[mysql]\naddr = \"x\"\n", nil, []string{`key "mysql": tables are not supported`}},
		{"scalar.yaml", "just a string\n", nil, []string{"want a mapping of flag names to values"}},
		{"list.yaml", "name: [a, b]\n", nil, []string{`key "name": takes one value, not a list`}},
		{"badint.toml", "commit-records = \"many\"\n", nil, []string{`key "commit-records": invalid value "many"`}},
		{"baddur.yaml", "commit-interval: 5\n", nil, []string{`key "commit-interval": invalid value "5"`}},
		{"syntax.yaml", "name: [a\n", nil, []string{"syntax.yaml: yaml:"}},
		{"syntax.toml", "name = \n", nil, []string{"syntax.toml: toml:"}},
		{"c.json", "{}", nil, []string{`unknown format ".json": name it *.yaml, *.yml or *.toml`}},
		// A bad value is reported even when a flag overrides the key.
		{"over.yaml", "commit-interval: soon\n", []string{"--commit-interval", "1s"}, []string{`invalid value "soon"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, false, append([]string{"--config", writeFile(t, c.name, c.content)}, c.args...)...)
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := load(t, false, "--config", filepath.Join(t.TempDir(), "missing.yaml"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.yaml: no such file")

	_, err = load(t, false, "extra")
	assert.EqualError(t, err, `unexpected argument "extra"`)
}

// A FlagSet without --config (binlog-router schema) reads no file, even
// with BINLOG_ROUTER_CONFIG set.
func TestLoadWithoutConfigFlag(t *testing.T) {
	t.Setenv("BINLOG_ROUTER_CONFIG", writeFile(t, "c.yaml", "bogus: 1\n"))
	t.Setenv("BINLOG_ROUTER_PRESET", "debezium")
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	preset := fs.String("preset", "default", "")
	require.NoError(t, Load(fs, nil))
	assert.Equal(t, "debezium", *preset)
}

func TestClosest(t *testing.T) {
	known := map[string]bool{"mysql-addr": true, "mysql-user": true, "kafka-brokers": true, "outbox-table": true, "config": true}
	for in, want := range map[string]string{
		"mysql-adr":     "mysql-addr",
		"MYSQL_ADDR":    "mysql-addr",
		"--mysql-addr":  "mysql-addr",
		"kafka-broker":  "kafka-brokers",
		"outbox-tables": "outbox-table",
		"conifg":        "", // never suggests config itself
		"retention":     "",
	} {
		assert.Equal(t, want, closest(in, known), in)
	}
	assert.Equal(t, 3, schema.EditDistance("kitten", "sitting"))
	assert.Equal(t, 0, schema.EditDistance("", ""))
	assert.Equal(t, 4, schema.EditDistance("", "abcd"))
}

func TestHelpMentionsEveryNewFlag(t *testing.T) {
	c := Default()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	c.RegisterRun(fs)
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	for _, name := range []string{"config", "mysql-tls", "mysql-tls-ca", "mysql-tls-cert", "mysql-tls-key", "mysql-tls-server-name",
		"kafka-tls", "kafka-tls-ca", "kafka-tls-cert", "kafka-tls-key", "kafka-tls-server-name", "kafka-tls-insecure-skip-verify",
		"kafka-sasl-mechanism", "kafka-sasl-user", "kafka-sasl-password", "kafka-sasl-password-file", "mysql-password-file"} {
		f := fs.Lookup(name)
		if assert.NotNil(t, f, name) {
			assert.NotEmpty(t, f.Usage, name)
		}
	}
	assert.Contains(t, b.String(), "DANGEROUS")
}

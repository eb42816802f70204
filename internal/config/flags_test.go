package config

import (
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRegisterByCommand: each command gets run's flags (if it reuses the
// router's command line) plus its own, and replay's -h marks the flags of
// the live pipeline as ignored.
func TestRegisterByCommand(t *testing.T) {
	flags := func(cmd Command) *flag.FlagSet {
		c := Default()
		fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
		c.Register(fs, cmd)
		return fs
	}
	run := flags(CmdRun)
	for _, tc := range []struct {
		cmd      Command
		own, not []string
	}{
		{CmdRun, nil, []string{"from-gtid", "gtid", "force", "flavor", "table"}},
		{CmdValidate, nil, []string{"from-gtid", "gtid", "force", "flavor"}},
		{CmdReplay, []string{"from-gtid", "from-time", "to-gtid", "to-time", "topic-prefix", "dry-run", "transactional-id", "replay-server-id"}, []string{"gtid", "force"}},
		{CmdCheckpointShow, []string{"as-debezium-offset"}, []string{"gtid", "from-debezium-offset", "force"}},
		{CmdCheckpointSet, []string{"gtid", "from-debezium-offset", "force"}, []string{"from-gtid", "as-debezium-offset"}},
		{CmdCheckpointReset, []string{"force"}, []string{"gtid", "from-debezium-offset", "as-debezium-offset"}},
		{CmdPrune, []string{"older-than", "prune-mysql-user", "prune-mysql-password-file", "prune-margin", "prune-batch", "prune-pause", "prune-rate", "dry-run"}, []string{"from-gtid", "gtid", "force"}},
	} {
		fs := flags(tc.cmd)
		run.VisitAll(func(f *flag.Flag) {
			assert.NotNil(t, fs.Lookup(f.Name), "command %b lacks --%s of run", tc.cmd, f.Name)
		})
		for _, name := range tc.own {
			assert.NotNil(t, fs.Lookup(name), "command %b: --%s", tc.cmd, name)
		}
		for _, name := range tc.not {
			assert.Nil(t, fs.Lookup(name), "command %b: --%s", tc.cmd, name)
		}
	}
	schema := flags(CmdSchema)
	var names []string
	schema.VisitAll(func(f *flag.Flag) { names = append(names, f.Name+"="+f.DefValue) })
	assert.Equal(t, []string{"flavor=mysql", "preset=default", "table=outbox"}, names, "schema reads no config file")

	replay := flags(CmdReplay)
	for _, name := range []string{"start", "server-id", "ha", "checkpoint-topic", "kafka-timeout"} {
		assert.True(t, strings.HasPrefix(replay.Lookup(name).Usage, ignoredPrefix), "replay ignores --%s", name)
		assert.False(t, strings.HasPrefix(run.Lookup(name).Usage, ignoredPrefix), "run uses --%s", name)
	}
	for _, name := range []string{"mysql-addr", "outbox-table", "topic-template", "commit-records", "compression"} {
		assert.False(t, strings.HasPrefix(replay.Lookup(name).Usage, ignoredPrefix), "replay uses --%s", name)
	}
}

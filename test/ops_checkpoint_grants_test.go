package test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestCheckpointCmdREADMEGrants: with exactly the README's least-privilege
// MariaDB grants (REPLICATION SLAVE, BINLOG MONITOR, SELECT on the outbox
// table), which do not let the user list the source's replicas, checkpoint
// set still looks for the router's binlog connection: with no router
// connected it sets the checkpoint with no warning; while a router using
// those grants runs, idle, so that its binlog connection is the only sign,
// set and reset refuse naming that connection and leave the checkpoint
// unchanged; once the router stopped, set is accepted again.
func TestCheckpointCmdREADMEGrants(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	const user, password = "binlog_router", "readme-s3cret"
	e.Exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + password + "'")
	e.Exec("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '" + user + "'@'%'")
	e.Exec("GRANT SELECT ON shop.outbox TO '" + user + "'@'%'")
	pwFile := writeSecret(t, t.TempDir(), "mysql-password", password+"\n")
	args := harness.ArgsWith(e.Args("cpgrants", "--idle-checkpoint", "200ms", "--mysql-password-file", pwFile), "--mysql-user", user)

	// The grants cannot list the replicas: the check must see the router
	// another way.
	cfg, err := mysql.ParseDSN(e.Maria.DSN(""))
	require.NoError(t, err)
	cfg.User, cfg.Passwd = user, password
	userDB, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() { userDB.Close() })
	_, err = userDB.Exec("SHOW SLAVE HOSTS")
	require.ErrorContains(t, err, "REPLICATION MASTER ADMIN", "the README's grants do not list replicas")

	writeEvents(e, "Granted", 2)
	mid := e.GTIDPos()
	writeEvents(e, "Granted", 1)
	head := e.GTIDPos()

	setArgs := append(append([]string{"checkpoint", "set"}, args...), "--gtid", mid)
	res := harness.RunCLI(t, setArgs...)
	require.Equal(t, 0, res.Code, "no router connected: set proceeds\n%s", res.Stderr)
	assert.NotContains(t, res.Stderr, "cannot list", "the router's binlog connection was looked for")
	assert.NotContains(t, res.Stderr, `"level":"warn"`)
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet)

	r := harness.StartRouter(t, args...)
	e.WaitCheckpoint("cpgrants", head) // it published the last transaction

	// Idle, the router writes no checkpoint: after 2x --idle-checkpoint its
	// binlog connection is the only sign left.
	var refusal string
	harness.Eventually(t, 30*time.Second, "a refusal on the binlog connection alone", func() bool {
		res := harness.RunCLI(t, setArgs...)
		require.Equal(t, 1, res.Code, "set while the router runs: %s", res.Stderr)
		refusal = res.Stderr
		return !strings.Contains(refusal, "its checkpoint was written")
	})
	t.Logf("broker %s; refusal: %s", harness.BrokerName(), strings.TrimSpace(refusal))
	assert.Contains(t, refusal, `router "cpgrants" looks active`)
	assert.Contains(t, refusal, "its source user "+user+" has a binlog connection open (connection ")
	assert.Contains(t, refusal, "REPLICATION MASTER ADMIN", "the refusal names the privilege that would tell routers apart")
	assert.Contains(t, refusal, "--force")
	assert.NotContains(t, refusal, "cannot list")
	res = harness.RunCLI(t, append([]string{"checkpoint", "reset"}, args...)...)
	assert.Equal(t, 1, res.Code, "reset while the router runs: %s", res.Stderr)
	assert.Contains(t, res.Stderr, "its source user "+user+" has a binlog connection open")
	assert.Equal(t, head, showCheckpoint(t, args).GTIDSet, "refused: unchanged")

	require.Equal(t, 0, r.Stop(20*time.Second))
	res = cpSet(t, args, "--gtid", mid)
	assert.NotContains(t, res.Stderr, "cannot list")
	assert.NotContains(t, res.Stderr, "binlog connection open", "the stopped router's connection is gone")
	assert.Equal(t, mid, showCheckpoint(t, args).GTIDSet, "accepted once the router stopped")
}

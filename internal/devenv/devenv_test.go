package devenv

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMariaDBSettings(t *testing.T) {
	t.Parallel()
	m := NewMariaDB(t, MariaDBConfig{})
	db := CreateDatabase(t, m, "settings")

	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(m.Port()), m.Addr())
	assert.Contains(t, m.DSN("settings"), "root@tcp("+m.Addr()+")/settings?")
	for _, opt := range []string{"parseTime=true", "multiStatements=true", "interpolateParams=true"} {
		assert.Contains(t, m.DSN("settings"), opt)
	}

	var (
		logBin, strict, serverID, domainID, slaveUpdates            int
		format, image, metadata, charset, collation, bind, database string
	)
	err := db.QueryRow(`SELECT @@log_bin, @@binlog_format, @@binlog_row_image, @@binlog_row_metadata,
		@@gtid_strict_mode, @@character_set_server, @@collation_server, @@server_id, @@gtid_domain_id,
		@@log_slave_updates, @@bind_address, DATABASE()`).
		Scan(&logBin, &format, &image, &metadata, &strict, &charset, &collation, &serverID, &domainID,
			&slaveUpdates, &bind, &database)
	require.NoError(t, err)
	assert.Equal(t, 1, logBin)
	assert.Equal(t, "ROW", format)
	assert.Equal(t, "FULL", image)
	assert.Equal(t, "FULL", metadata)
	assert.Equal(t, 1, strict)
	assert.Equal(t, "utf8mb4", charset)
	assert.Equal(t, "utf8mb4_unicode_ci", collation)
	assert.Equal(t, 1, serverID)
	assert.Equal(t, 0, domainID)
	assert.Equal(t, 0, slaveUpdates)
	assert.Equal(t, "127.0.0.1", bind)
	assert.Equal(t, "settings", database)

	// A committed write reaches the binlog with a GTID of our domain and server.
	_, err = db.Exec("CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1)")
	require.NoError(t, err)
	assert.Regexp(t, `^0-1-\d+$`, gtidBinlogPos(t, db))
}

func TestMariaDBKillStopAndStartKeepData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := NewMariaDB(t, MariaDBConfig{})
	db := CreateDatabase(t, m, "restart")
	_, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20)); INSERT INTO t VALUES (1, 'one'), (2, 'two')")
	require.NoError(t, err)
	pos := gtidBinlogPos(t, db)
	port := m.Port()

	require.NoError(t, m.Kill())
	assert.False(t, m.Running())
	require.Error(t, pingOnce(m), "server still answers after Kill")

	require.NoError(t, m.Start(ctx))
	assert.Equal(t, port, m.Port())
	assert.Equal(t, pos, gtidBinlogPos(t, db), "GTID position after crash recovery")
	assert.Equal(t, 2, count(t, db, "SELECT COUNT(*) FROM t"))

	_, err = db.Exec("INSERT INTO t VALUES (3, 'three')")
	require.NoError(t, err)
	require.NoError(t, m.Stop(ctx))
	require.Error(t, pingOnce(m), "server still answers after Stop")
	require.NoError(t, m.Start(ctx))
	assert.ErrorContains(t, m.Start(ctx), "already running")
	assert.Equal(t, 3, count(t, db, "SELECT COUNT(*) FROM t"))
	assert.Contains(t, m.LogTail(50), "ready for connections")
}

func TestTwoMariaDBsAtOnce(t *testing.T) {
	t.Parallel()
	m1 := NewMariaDB(t, MariaDBConfig{})
	m2 := NewMariaDB(t, MariaDBConfig{
		ServerID:        2,
		DomainID:        7,
		LogSlaveUpdates: true,
		ExtraArgs:       []string{"--binlog-row-metadata=MINIMAL"},
	})
	require.NotEqual(t, m1.Port(), m2.Port())

	CreateDatabase(t, m1, "only_on_one")
	db2 := CreateDatabase(t, m2, "two")
	var serverID, domainID, slaveUpdates int
	var metadata string
	require.NoError(t, db2.QueryRow("SELECT @@server_id, @@gtid_domain_id, @@log_slave_updates, @@binlog_row_metadata").
		Scan(&serverID, &domainID, &slaveUpdates, &metadata))
	assert.Equal(t, 2, serverID)
	assert.Equal(t, 7, domainID)
	assert.Equal(t, 1, slaveUpdates)
	assert.Equal(t, "MINIMAL", metadata, "ExtraArgs must override the defaults")
	assert.Equal(t, 0, count(t, db2, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'only_on_one'"))
}

func TestStartMariaDBRefusesAnotherServersPort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other := NewMariaDB(t, MariaDBConfig{})
	m, err := StartMariaDB(ctx, MariaDBConfig{Port: other.Port()})
	if m != nil {
		_ = m.Close()
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another server")
}

func TestStartMariaDBErrorHasLogTail(t *testing.T) {
	t.Parallel()
	m, err := StartMariaDB(context.Background(), MariaDBConfig{ExtraArgs: []string{"--no-such-option=1"}})
	require.Error(t, err)
	assert.Nil(t, m)
	assert.Contains(t, err.Error(), "unknown variable")
}

func TestCloseRemovesEverything(t *testing.T) {
	t.Parallel()
	m, err := StartMariaDB(context.Background(), MariaDBConfig{})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	_, err = os.Stat(m.dir)
	assert.True(t, os.IsNotExist(err), "temp dir %s left behind", m.dir)
	require.Error(t, pingOnce(m), "server still answers after Close")
	require.NoError(t, m.Close(), "second Close")
	require.Error(t, m.Start(context.Background()), "Start after Close")
}

func TestEnsureMariaDBInstalledFindsIt(t *testing.T) {
	if _, err := findBinaries(); err != nil {
		t.Skipf("mariadb-server is not installed, so there is nothing to find; EnsureMariaDBInstalled would run apt-get here, which this test must not do (.ci/run installs it before the tests): %v", err)
	}
	require.NoError(t, EnsureMariaDBInstalled(context.Background()))
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"a\nb\n", 0, ""},
		{"", 3, ""},
	} {
		assert.Equal(t, tc.want, lastLines(tc.in, tc.n), "lastLines(%q, %d)", tc.in, tc.n)
	}
}

func gtidBinlogPos(t *testing.T, db *sql.DB) string {
	t.Helper()
	var pos string
	require.NoError(t, db.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos))
	return pos
}

func count(t *testing.T, db *sql.DB, query string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(query).Scan(&n))
	return n
}

// pingOnce connects afresh, so a pooled connection cannot hide a dead server.
func pingOnce(m *MariaDB) error {
	db, err := m.DB("")
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

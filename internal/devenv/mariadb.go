package devenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/go-sql-driver/mysql"
)

// Server settings shared by mariadb-install-db and mariadbd.
const (
	innodbLogFileSize    = "48M"
	innodbBufferPoolSize = "64M"
)

// startAttempts bounds how often a server start picks new ports after
// losing a race for a free one.
const startAttempts = 5

// retryPortInUse runs start until it succeeds, fails otherwise than with
// errPortInUse, or has run startAttempts times; start picks new free ports
// on each run.
func retryPortInUse[T any](start func() (T, error)) (T, error) {
	var v T
	var err error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		if v, err = start(); err == nil || !errors.Is(err, errPortInUse) {
			break
		}
	}
	return v, err
}

// MariaDBConfig configures a private server. The zero value is a primary
// with server_id 1 in GTID domain 0 on a free port.
type MariaDBConfig struct {
	// ServerID is --server-id; 0 means 1. Servers that replicate from each
	// other need distinct IDs.
	ServerID uint32
	// DomainID is --gtid-domain-id, default 0.
	DomainID uint32
	// LogSlaveUpdates writes replicated transactions to this server's own
	// binlog (--log-slave-updates), for a replica that others read from.
	// Default off (--skip-log-slave-updates).
	LogSlaveUpdates bool
	// ExtraArgs are appended last to the mariadbd command line, so they
	// override the defaults (e.g. "--binlog-row-metadata=MINIMAL"). Options
	// fixed when the datadir is created (innodb_page_size,
	// lower_case_table_names) cannot be changed this way.
	ExtraArgs []string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one, and picks again
	// if another process takes it before mariadbd binds it.
	Port int
}

// MariaDB is a private mariadbd process with its own temporary directory.
// Its methods are safe for concurrent use; Start, Stop, Kill and Close are
// serialised.
type MariaDB struct {
	cfg  MariaDBConfig
	bins binaries
	dir  string
	port int

	mu     sync.Mutex
	proc   *process // nil when not running
	closed bool
}

// StartMariaDB creates a temporary directory, fills its datadir with system
// tables and starts mariadbd, returning once root can query it over TCP.
// On error nothing is left running or on disk, and the error carries the
// tail of the server's log. ctx bounds the start only, not the server's
// life; Close ends that.
func StartMariaDB(ctx context.Context, cfg MariaDBConfig) (*MariaDB, error) {
	if cfg.ServerID == 0 {
		cfg.ServerID = 1
	}
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "devenv-mariadb-")
	if err != nil {
		return nil, fmt.Errorf("creating mariadb temp dir: %w", err)
	}
	m := &MariaDB{cfg: cfg, bins: bins, dir: dir}
	for attempt := 1; ; attempt++ {
		err = m.startOnce(ctx)
		if err == nil {
			return m, nil
		}
		if cfg.Port != 0 || attempt == startAttempts || !errors.Is(err, errPortInUse) {
			break
		}
	}
	if cerr := m.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return nil, err
}

// startOnce starts on a fresh datadir and port.
func (m *MariaDB) startOnce(ctx context.Context) error {
	port := m.cfg.Port
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		port = p
	}
	m.port = port
	if err := os.RemoveAll(m.dataDir()); err != nil {
		return fmt.Errorf("resetting datadir: %w", err)
	}
	for _, d := range []string{m.dataDir(), m.tmpDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if err := prepareDataDir(ctx, m.bins, m.dataDir()); err != nil {
		return err
	}
	return m.Start(ctx)
}

// Addr returns "127.0.0.1:PORT".
func (m *MariaDB) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.port))
}

// Port returns the TCP port the server listens on; it stays the same across
// Stop/Kill and Start.
func (m *MariaDB) Port() int { return m.port }

// ServerID returns the server's @@server_id.
func (m *MariaDB) ServerID() uint32 { return m.cfg.ServerID }

// DataDir returns the server's datadir, which holds its binlogs
// (mysql-bin.NNNNNN).
func (m *MariaDB) DataDir() string { return m.dataDir() }

// DSN returns a github.com/go-sql-driver/mysql DSN for root over TCP, with
// parseTime=true (DATETIME as time.Time in UTC), multiStatements=true and
// interpolateParams=true, e.g.
// "root@tcp(127.0.0.1:PORT)/db?interpolateParams=true&multiStatements=true&parseTime=true".
// database may be empty.
func (m *MariaDB) DSN(database string) string {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = m.Addr()
	cfg.DBName = database
	cfg.ParseTime = true
	cfg.MultiStatements = true
	cfg.InterpolateParams = true
	return cfg.FormatDSN()
}

// DB opens a database/sql handle for root on database (may be empty). It
// does not connect; the caller closes it.
func (m *MariaDB) DB(database string) (*sql.DB, error) {
	db, err := sql.Open("mysql", m.DSN(database))
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", m.Addr(), err)
	}
	return db, nil
}

// Running reports whether a mariadbd started by Start has not been stopped
// or killed through this value. It does not notice a crash.
func (m *MariaDB) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.proc != nil
}

// Close kills the server if it runs (SIGKILL: its data is about to be
// deleted, so a graceful shutdown would only cost time) and removes its
// temporary directory. Calling Close again does nothing.
func (m *MariaDB) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	if m.proc != nil {
		m.proc.kill()
		m.proc = nil
	}
	if err := os.RemoveAll(m.dir); err != nil {
		return fmt.Errorf("removing mariadb temp dir %s: %w", m.dir, err)
	}
	return nil
}

func (m *MariaDB) dataDir() string  { return filepath.Join(m.dir, "data") }
func (m *MariaDB) tmpDir() string   { return filepath.Join(m.dir, "tmp") }
func (m *MariaDB) errorLog() string { return filepath.Join(m.dir, "error.log") }

// serverArgs is the mariadbd command line; --no-defaults must come first.
func (m *MariaDB) serverArgs() []string {
	slaveUpdates := "--skip-log-slave-updates"
	if m.cfg.LogSlaveUpdates {
		slaveUpdates = "--log-slave-updates"
	}
	args := []string{
		"--no-defaults",
		"--datadir=" + m.dataDir(),
		"--tmpdir=" + m.tmpDir(),
		"--socket=" + filepath.Join(m.dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(m.dir, "mysqld.pid"),
		"--log-error=" + m.errorLog(),
		"--port=" + strconv.Itoa(m.port),
		"--bind-address=127.0.0.1",
		"--server-id=" + strconv.FormatUint(uint64(m.cfg.ServerID), 10),
		"--gtid-domain-id=" + strconv.FormatUint(uint64(m.cfg.DomainID), 10),
		"--log-bin=mysql-bin",
		"--relay-log=relay-bin",
		"--binlog-format=ROW",
		"--binlog-row-image=FULL",
		"--binlog-row-metadata=FULL",
		"--gtid-strict-mode=1",
		slaveUpdates,
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_unicode_ci",
		"--skip-name-resolve",
		// Speed over durability: enough to survive SIGKILL of mariadbd.
		"--innodb-flush-log-at-trx-commit=2",
		"--sync-binlog=0",
		"--innodb-buffer-pool-size=" + innodbBufferPoolSize,
		"--innodb-log-file-size=" + innodbLogFileSize,
		"--max-allowed-packet=64M",
		"--performance-schema=OFF",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return append(args, m.cfg.ExtraArgs...)
}

package devenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// readyTimeout bounds how long Start waits for mariadbd to answer queries.
const readyTimeout = 30 * time.Second

// errPortInUse means mariadbd could not bind its port; StartMariaDB then
// retries on another one.
var errPortInUse = errors.New("port already in use")

// process is one run of mariadbd.
type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once Wait has returned
	err    error         // Wait's result; read only after exited is closed
}

// kill sends SIGKILL and waits for the process to be reaped.
func (p *process) kill() {
	_ = p.cmd.Process.Kill() // fails only if it already exited
	<-p.exited
}

// Start runs mariadbd again on the same datadir and port, after Stop or
// Kill (StartMariaDB calls it for the first run), and returns once root can
// query it. If it fails, the server is not running and the error carries the
// tail of the error log.
func (m *MariaDB) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return fmt.Errorf("starting mariadbd on port %d: server was closed", m.port)
	}
	if m.proc != nil {
		return fmt.Errorf("starting mariadbd on port %d: already running", m.port)
	}
	logStart := fileSize(m.errorLog())
	p, err := m.spawn()
	if err != nil {
		return fmt.Errorf("starting mariadbd on port %d: %w", m.port, err)
	}
	if err := m.waitReady(ctx, p, logStart); err != nil {
		p.kill()
		return fmt.Errorf("starting mariadbd on port %d: %w\n--- tail of %s ---\n%s",
			m.port, err, m.errorLog(), m.LogTail(30))
	}
	m.proc = p
	return nil
}

// Stop shuts the server down gracefully (SIGTERM) and waits for it to exit.
// If ctx ends first, the server is killed and ctx's error returned. Stop on
// a server that is not running does nothing.
func (m *MariaDB) Stop(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.proc
	if p == nil {
		return nil
	}
	m.proc = nil
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.kill()
		return fmt.Errorf("stopping mariadbd on port %d: %w", m.port, err)
	}
	select {
	case <-p.exited:
		if p.err != nil {
			return fmt.Errorf("stopping mariadbd on port %d: %w\n%s", m.port, p.err, m.LogTail(20))
		}
		return nil
	case <-ctx.Done():
		p.kill()
		return fmt.Errorf("stopping mariadbd on port %d: %w; killed it instead", m.port, ctx.Err())
	}
}

// Kill ends the server with SIGKILL, as a crash would, and waits for it to
// exit. Committed transactions survive (see the package doc). Kill on a
// server that is not running does nothing.
func (m *MariaDB) Kill() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil {
		m.proc.kill()
		m.proc = nil
	}
	return nil
}

// spawn starts mariadbd with its output appended to the error log.
func (m *MariaDB) spawn() (*process, error) {
	logFile, err := os.OpenFile(m.errorLog(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening error log: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(m.bins.mariadbd, m.serverArgs()...)
	cmd.Dir = m.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("running %s: %w", m.bins.mariadbd, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitReady polls until the server answers as root and proves to be ours,
// the process exits, or the deadline passes.
func (m *MariaDB) waitReady(ctx context.Context, p *process, logStart int64) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	cfg, err := mysql.ParseDSN(m.DSN(""))
	if err != nil {
		return fmt.Errorf("parsing dsn: %w", err)
	}
	cfg.Timeout = 2 * time.Second
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("creating connector: %w", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()

	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		pingCtx, cancelPing := context.WithTimeout(ctx, 2*time.Second)
		lastErr = db.PingContext(pingCtx)
		cancelPing()
		if lastErr == nil {
			return m.checkOwnServer(ctx, db)
		}
		select {
		case <-p.exited:
			return m.exitError(p, logStart)
		case <-ctx.Done():
			return fmt.Errorf("waiting for mariadbd to accept connections: %w (last error: %v)", ctx.Err(), lastErr)
		case <-tick.C:
		}
	}
}

// checkOwnServer makes sure the server answering on our port uses our
// datadir, so a test never runs against a server that happened to be there.
func (m *MariaDB) checkOwnServer(ctx context.Context, db *sql.DB) error {
	var got string
	if err := db.QueryRowContext(ctx, "SELECT @@datadir").Scan(&got); err != nil {
		return fmt.Errorf("reading @@datadir: %w", err)
	}
	want, err := filepath.EvalSymlinks(m.dataDir())
	if err != nil {
		want = m.dataDir()
	}
	if filepath.Clean(got) != filepath.Clean(want) && filepath.Clean(got) != filepath.Clean(m.dataDir()) {
		return fmt.Errorf("port %d is served by another server (datadir %s): %w", m.port, got, errPortInUse)
	}
	return nil
}

// exitError explains why mariadbd exited during startup, recognising a lost
// race for the port.
func (m *MariaDB) exitError(p *process, logStart int64) error {
	b, _ := os.ReadFile(m.errorLog())
	if logStart <= int64(len(b)) {
		b = b[logStart:]
	}
	if strings.Contains(string(b), "Address already in use") {
		return fmt.Errorf("mariadbd exited (%v): %w", p.err, errPortInUse)
	}
	return fmt.Errorf("mariadbd exited during startup: %v", p.err)
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

package devenv

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// postgresBinGlob matches where Debian's postgresql packages install
// initdb and postgres, one directory per major version.
const postgresBinGlob = "/usr/lib/postgresql/*/bin"

// postgresBinDir returns POSTGRES_BIN_DIR, or else the newest installed
// major version's bin directory.
func postgresBinDir() string {
	if bin := os.Getenv("POSTGRES_BIN_DIR"); bin != "" {
		return bin
	}
	dirs, _ := filepath.Glob(postgresBinGlob)
	best, bestMajor := "/usr/lib/postgresql/15/bin", -1
	for _, d := range dirs {
		major, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err == nil && major > bestMajor {
			best, bestMajor = d, major
		}
	}
	return best
}

// Postgres is a private PostgreSQL server: its own cluster (initdb) in a
// temporary directory, listening on a free loopback port and a unix socket
// in that directory, with trust authentication for the superuser
// "postgres". When the test process runs as root, initdb and postgres run
// as the operating-system user postgres.
type Postgres struct {
	dir  string
	port int
	cred *syscall.Credential

	mu   sync.Mutex
	proc *process
}

// StartPostgres creates and starts a private server, returning once it
// accepts connections. On error nothing is left running or on disk.
func StartPostgres(ctx context.Context) (*Postgres, error) {
	bin := postgresBinDir()
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		return nil, fmt.Errorf("postgres not found in %s (install Debian's postgresql package, or set POSTGRES_BIN_DIR): %w", bin, err)
	}
	dir, err := os.MkdirTemp("", "devenv-pg-")
	if err != nil {
		return nil, fmt.Errorf("creating postgres temp dir: %w", err)
	}
	p := &Postgres{dir: dir}
	if err := p.start(ctx, bin); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Postgres) start(ctx context.Context, bin string) error {
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fmt.Errorf("running as root needs the user postgres for initdb: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(p.dir, uid, gid); err != nil {
			return fmt.Errorf("handing %s to postgres: %w", p.dir, err)
		}
	}
	data := filepath.Join(p.dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	var out bytes.Buffer
	initdb.Stdout, initdb.Stderr = &out, &out
	initdb.SysProcAttr = p.sysProcAttr()
	if err := initdb.Run(); err != nil {
		return fmt.Errorf("running initdb: %w\n%s", err, lastLines(out.String(), 20))
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	p.port = port
	logFile, err := os.OpenFile(filepath.Join(p.dir, "postgres.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", p.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=100", "-c", "shared_buffers=32MB", "-c", "deadlock_timeout=100ms")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = p.sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running postgres: %w", err)
	}
	proc := &process{cmd: cmd, exited: make(chan struct{})}
	go func() {
		proc.err = cmd.Wait()
		close(proc.exited)
	}()
	p.mu.Lock()
	p.proc = proc
	p.mu.Unlock()
	return p.waitReady(ctx, proc)
}

func (p *Postgres) sysProcAttr() *syscall.SysProcAttr {
	a := sysProcAttr()
	a.Credential = p.cred
	return a
}

func (p *Postgres) waitReady(ctx context.Context, proc *process) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	db, err := p.DB("postgres")
	if err != nil {
		return err
	}
	defer db.Close()
	var lastErr error
	for {
		var dir string
		lastErr = db.QueryRowContext(ctx, "SHOW data_directory").Scan(&dir)
		if lastErr == nil {
			if filepath.Clean(dir) != filepath.Join(p.dir, "data") {
				return fmt.Errorf("port %d is served by another postgres (data_directory %s)", p.port, dir)
			}
			return nil
		}
		select {
		case <-proc.exited:
			b, _ := os.ReadFile(filepath.Join(p.dir, "postgres.log"))
			return fmt.Errorf("postgres exited during startup (%v):\n%s", proc.err, lastLines(string(b), 20))
		case <-ctx.Done():
			return fmt.Errorf("waiting for postgres: %w (last error: %v)", ctx.Err(), lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Addr returns "127.0.0.1:PORT".
func (p *Postgres) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// DSN returns a pgx DSN for the superuser on database over TCP.
func (p *Postgres) DSN(database string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", p.Addr(), database)
}

// DB opens a database/sql handle (driver "pgx") on database; the caller
// closes it.
func (p *Postgres) DB(database string) (*sql.DB, error) {
	db, err := sql.Open("pgx", p.DSN(database))
	if err != nil {
		return nil, fmt.Errorf("opening postgres %s: %w", p.Addr(), err)
	}
	return db, nil
}

// Close kills the server and removes its directory. Calling it again does
// nothing.
func (p *Postgres) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc != nil {
		p.proc.kill()
		p.proc = nil
	}
	if p.dir == "" {
		return nil
	}
	err := os.RemoveAll(p.dir)
	p.dir = ""
	if err != nil {
		return fmt.Errorf("removing postgres temp dir: %w", err)
	}
	return nil
}

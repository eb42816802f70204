package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// routerName is the router's --name: its checkpoint key and Kafka
// transactional id.
const routerName = "demo"

// router is the running binlog-router process, its log shown live.
type router struct {
	bin  string
	cmd  *exec.Cmd
	log  *prefixWriter
	done chan struct{} // closed when the process has exited
}

// startRouter runs `binlog-router run` with the flags an operator would
// give it.
func startRouter(bin, mysqlAddr string, brokers []string) (*router, error) {
	args := []string{"run",
		"--mysql-addr", mysqlAddr,
		"--kafka-brokers", strings.Join(brokers, ","),
		"--outbox-table", outboxTable,
		"--log-format", "console",
		"--name", routerName,
	}
	out.printf("  %s", out.paint(dim, "$ binlog-router "+strings.Join(args, " ")))
	r := &router{bin: bin, log: &prefixWriter{t: out, prefix: "router | "}, done: make(chan struct{})}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = demoEnv()
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	r.cmd.SysProcAttr = sysProcAttr()
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the router: %w", err)
	}
	go func() {
		_ = r.cmd.Wait() // the exit code is read from ProcessState
		r.log.flush()
		close(r.done)
	}()
	return r, nil
}

// errRouterExited reports that the router stopped on its own.
var errRouterExited = errors.New("router exited unexpectedly; its log is above")

// exited returns nil while the router runs, and errRouterExited with its
// exit code once it has stopped.
func (r *router) exited() error {
	select {
	case <-r.done:
		return fmt.Errorf("%w (exit code %d)", errRouterExited, r.cmd.ProcessState.ExitCode())
	default:
		return nil
	}
}

// demoEnv is this process's environment without BINLOG_ROUTER_*
// variables, so that settings meant for a real deployment cannot change
// what the demo shows: the flags given are the whole configuration.
func demoEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BINLOG_ROUTER_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitStreaming polls until the router shows up on the server as a
// replica reading the binlog (a "Binlog Dump" thread).
func (r *router) waitStreaming(ctx context.Context, db *sql.DB, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := r.exited(); err != nil {
			return err
		}
		var n int
		err := db.QueryRowContext(ctx,
			"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'").Scan(&n)
		if err == nil && n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("router did not connect to mariadb as a replica within %s (last error: %v)", timeout, err)
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM, as an orchestrator would, and waits for the exit.
func (r *router) stop(timeout time.Duration) (code int, err error) {
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return -1, fmt.Errorf("sending SIGTERM to the router: %w", err)
	}
	select {
	case <-r.done:
		return r.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		r.kill()
		return -1, fmt.Errorf("router still running %s after SIGTERM; killed it", timeout)
	}
}

// kill ends the router if it still runs; used on the way out after an
// error.
func (r *router) kill() {
	select {
	case <-r.done:
	default:
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

// showCheckpoint runs `binlog-router checkpoint show` and returns its
// output.
func showCheckpoint(ctx context.Context, bin string, brokers []string) (string, error) {
	args := []string{"checkpoint", "show", "--name", routerName, "--kafka-brokers", strings.Join(brokers, ",")}
	out.printf("  %s", out.paint(dim, "$ binlog-router "+strings.Join(args, " ")))
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = demoEnv()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("binlog-router checkpoint show: %w\n%s", err, stderr.String())
	}
	return stdout.String(), nil
}

package test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// router is one binlog-router process: `binlog-router run` (startRouter)
// or another command (startCommand).
type router struct {
	t       testing.TB
	command string // "run", "replay", ...
	args    []string
	env     []string
	cmd     *exec.Cmd
	out     *lockedBuffer
	mark    int // length of out when the current process started
	done    chan struct{}
	err     error // Wait's result for the current process; read after done
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// startRouter runs `binlog-router run args...`; the process is killed at
// cleanup and its log is printed if the test failed.
func startRouter(t testing.TB, args ...string) *router {
	t.Helper()
	return startCommand(t, "run", args...)
}

// startRouterEnv is startRouter with extra environment variables.
func startRouterEnv(t *testing.T, env []string, args ...string) *router {
	t.Helper()
	return startProcess(t, "run", env, args)
}

// startCommand runs `binlog-router command args...` as startRouter does.
func startCommand(t testing.TB, command string, args ...string) *router {
	t.Helper()
	return startProcess(t, command, nil, args)
}

// startProcess starts `binlog-router command args...` with the extra
// environment variables env; the process is killed when the test ends,
// and its log shown if the test failed.
func startProcess(t testing.TB, command string, env, args []string) *router {
	t.Helper()
	r := &router{t: t, command: command, args: args, env: env, out: &lockedBuffer{}}
	r.start()
	t.Cleanup(func() {
		r.kill()
		if t.Failed() {
			t.Logf("router log:\n%s", tail(r.out.String(), 60))
			keepLog(t, "router", r.out.String())
		}
	})
	return r
}

// keepLog writes a failed test's whole log of what (the router, a Kafka
// node) into the directory BINLOG_ROUTER_TEST_LOGS names, if set, for a
// failure that its last lines do not explain.
func keepLog(t testing.TB, what, log string) {
	dir := os.Getenv("BINLOG_ROUTER_TEST_LOGS")
	if dir == "" {
		return
	}
	f, err := os.CreateTemp(dir, strings.NewReplacer("/", "_").Replace(t.Name())+"-"+what+"-*.log")
	if err != nil {
		t.Logf("keeping the %s log: %v", what, err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(log); err != nil {
		t.Logf("keeping the %s log: %v", what, err)
		return
	}
	t.Logf("%s log kept in %s", what, f.Name())
}

func (r *router) start() {
	r.t.Helper()
	r.cmd = exec.Command(routerBin, append([]string{r.command}, r.args...)...)
	r.cmd.Env = append(os.Environ(), r.env...)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	// The kernel sends Pdeathsig when the thread that started the child
	// exits (go.dev/issue/27505). Go ends a thread only when a goroutine
	// locked to it (runtime.LockOSThread) returns, which nothing in this
	// test binary does: so in practice when the test process dies.
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r.mark = r.out.Len()
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("starting router: %v", err)
	}
	done := make(chan struct{})
	r.done = done
	go func(cmd *exec.Cmd) {
		err := cmd.Wait()
		r.err = err
		close(done)
	}(r.cmd)
}

// restart starts the process again with the same arguments.
func (r *router) restart() {
	r.t.Helper()
	r.start()
}

func (r *router) running() bool {
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits for the exit; it returns the exit code,
// -1 when a signal ended the process (the signal is logged).
//
// A process that has not written its first log line may not handle
// SIGTERM yet (it does from the start of main, before any output), and
// would die of it: stop waits for that line first, as an operator's stop
// comes after the start.
func (r *router) stop(timeout time.Duration) int {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for r.running() && r.out.Len() == r.mark && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !r.running() {
		r.t.Logf("router had exited before SIGTERM: %s", r.describeExit())
		return r.exitCode()
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(time.Until(deadline)):
		r.kill()
		r.t.Fatalf("router did not stop within %s after SIGTERM", timeout)
	}
	if code := r.exitCode(); code != 0 {
		r.t.Logf("router stopped by SIGTERM: %s", r.describeExit())
	}
	return r.exitCode()
}

// describeExit says how the process ended: its exit code, or the signal
// that ended it.
func (r *router) describeExit() string {
	ps := r.cmd.ProcessState
	if ps == nil {
		return "still running"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("pid %d ended by signal %s (%v)", ps.Pid(), ws.Signal(), r.err)
	}
	return fmt.Sprintf("pid %d exited with code %d", ps.Pid(), ps.ExitCode())
}

// kill sends SIGKILL and waits.
func (r *router) kill() {
	if r.cmd == nil || !r.running() {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.done
}

// wait waits for the process to exit by itself and returns its exit code.
func (r *router) wait(timeout time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		r.t.Fatalf("router still running after %s; log:\n%s", timeout, tail(r.out.String(), 30))
	}
	return r.exitCode()
}

func (r *router) exitCode() int {
	if r.cmd.ProcessState == nil {
		return -1
	}
	return r.cmd.ProcessState.ExitCode()
}

// waitLog polls the log until it contains s.
func (r *router) waitLog(ctx context.Context, s string) error {
	for {
		if strings.Contains(r.out.String(), s) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("router log never contained %q", s)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cliResult is the outcome of one binlog-router command.
type cliResult struct {
	code           int
	stdout, stderr string
}

// cliRun runs binlog-router with args and waits for it (at most a minute).
func cliRun(t testing.TB, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, routerBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("binlog-router %s: %v", args[0], err)
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// lineWith is the first log line that contains s.
func lineWith(log, s string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

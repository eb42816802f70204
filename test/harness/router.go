package harness

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

// Router is one binlog-router process: `binlog-router run` (StartRouter)
// or another command (StartCommand).
type Router struct {
	t       testing.TB
	command string // "run", "replay", ...
	args    []string
	env     []string
	Cmd     *exec.Cmd
	Out     *LockedBuffer
	Mark    int // length of out when the current process started
	done    chan struct{}
	err     error // Wait's result for the current process; read after done
}

// LockedBuffer is a router's output: written by the process, read by
// the test while it runs.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Len is the number of bytes written so far.
func (l *LockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// StartRouter runs `binlog-router run args...`; the process is killed at
// cleanup and its log is printed if the test failed.
func StartRouter(t testing.TB, args ...string) *Router {
	t.Helper()
	return StartCommand(t, "run", args...)
}

// StartRouterEnv is StartRouter with extra environment variables.
func StartRouterEnv(t *testing.T, env []string, args ...string) *Router {
	t.Helper()
	return startProcess(t, "run", env, args)
}

// StartCommand runs `binlog-router command args...` as StartRouter does.
func StartCommand(t testing.TB, command string, args ...string) *Router {
	t.Helper()
	return startProcess(t, command, nil, args)
}

// startProcess starts `binlog-router command args...` with the extra
// environment variables env; the process is killed when the test ends,
// and its log shown if the test failed.
func startProcess(t testing.TB, command string, env, args []string) *Router {
	t.Helper()
	r := &Router{t: t, command: command, args: args, env: env, Out: &LockedBuffer{}}
	r.start()
	t.Cleanup(func() {
		r.Kill()
		if t.Failed() {
			t.Logf("router log:\n%s", Tail(r.Out.String(), 60))
			keepLog(t, "router", r.Out.String())
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

// start runs binlog-router with r's command, arguments and environment;
// what it writes is appended to Out, whose length before it is Mark.
func (r *Router) start() {
	r.t.Helper()
	r.Cmd = exec.Command(RouterBin, append([]string{r.command}, r.args...)...)
	r.Cmd.Env = append(os.Environ(), r.env...)
	r.Cmd.Stdout, r.Cmd.Stderr = r.Out, r.Out
	// The kernel sends Pdeathsig when the thread that started the child
	// exits (go.dev/issue/27505). Go ends a thread only when a goroutine
	// locked to it (runtime.LockOSThread) returns, which nothing in this
	// test binary does: so in practice when the test process dies.
	r.Cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r.Mark = r.Out.Len()
	if err := r.Cmd.Start(); err != nil {
		r.t.Fatalf("starting router: %v", err)
	}
	done := make(chan struct{})
	r.done = done
	go func(cmd *exec.Cmd) {
		err := cmd.Wait()
		r.err = err
		close(done)
	}(r.Cmd)
}

// Restart starts the process again (after Stop, Kill or its exit) with
// the same command, arguments and environment.
func (r *Router) Restart() {
	r.t.Helper()
	r.start()
}

// Running reports whether the process has not exited.
func (r *Router) Running() bool {
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM and waits for the exit; it returns the exit code,
// -1 when a signal ended the process (the signal is logged).
//
// A process that has not written its first log line may not handle
// SIGTERM yet (it does from the start of main, before any output), and
// would die of it: stop waits for that line first, as an operator's stop
// comes after the start.
func (r *Router) Stop(timeout time.Duration) int {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for r.Running() && r.Out.Len() == r.Mark && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !r.Running() {
		r.t.Logf("router had exited before SIGTERM: %s", r.DescribeExit())
		return r.ExitCode()
	}
	_ = r.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(time.Until(deadline)):
		r.Kill()
		r.t.Fatalf("router did not stop within %s after SIGTERM", timeout)
	}
	if code := r.ExitCode(); code != 0 {
		r.t.Logf("router stopped by SIGTERM: %s", r.DescribeExit())
	}
	return r.ExitCode()
}

// DescribeExit says how the process ended: its exit code, or the signal
// that ended it.
func (r *Router) DescribeExit() string {
	ps := r.Cmd.ProcessState
	if ps == nil {
		return "still running"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("pid %d ended by signal %s (%v)", ps.Pid(), ws.Signal(), r.err)
	}
	return fmt.Sprintf("pid %d exited with code %d", ps.Pid(), ps.ExitCode())
}

// Kill sends SIGKILL and waits.
func (r *Router) Kill() {
	if r.Cmd == nil || !r.Running() {
		return
	}
	_ = r.Cmd.Process.Kill()
	<-r.done
}

// Wait waits for the process to exit by itself and returns its exit code.
func (r *Router) Wait(timeout time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		r.t.Fatalf("router still running after %s; log:\n%s", timeout, Tail(r.Out.String(), 30))
	}
	return r.ExitCode()
}

// ExitCode is the exit code of the process, -1 while it runs.
func (r *Router) ExitCode() int {
	if r.Cmd.ProcessState == nil {
		return -1
	}
	return r.Cmd.ProcessState.ExitCode()
}

// WaitLog polls the log until it contains s.
func (r *Router) WaitLog(ctx context.Context, s string) error {
	for {
		if strings.Contains(r.Out.String(), s) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("router log never contained %q", s)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// CLIResult is the outcome of one binlog-router command.
type CLIResult struct {
	Code           int
	Stdout, Stderr string
}

// RunCLI runs binlog-router with args and waits for it (at most a minute).
func RunCLI(t testing.TB, args ...string) CLIResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, RouterBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("binlog-router %s: %v", args[0], err)
	}
	return CLIResult{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
}

// LineWith is the first log line that contains s.
func LineWith(log, s string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// LogLine returns the first router log line containing s, or "".
func (r *Router) LogLine(s string) string { return LineWith(r.Out.String(), s) }

// LastLogLine returns the last router log line containing s, or "".
func (r *Router) LastLogLine(s string) string {
	lines := strings.Split(r.Out.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	return ""
}

// LogCount counts the router log lines containing s.
func (r *Router) LogCount(s string) int { return strings.Count(r.Out.String(), s) }

// MustRun fails the test if the router exited.
func (r *Router) MustRun(what string) {
	r.t.Helper()
	if !r.Running() {
		r.t.Fatalf("%s: the router exited (%s); it must keep running", what, r.DescribeExit())
	}
}

// PID is the running router's process id.
func (r *Router) PID() int { return r.Cmd.Process.Pid }

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// routerProc is one binlog-router process.
type routerProc struct {
	cmd     *exec.Cmd
	Started time.Time // just before the process was started
	logPath string
	rss     *rssSampler
	done    chan struct{}
	waitErr error
}

// routerUsage is what the kernel accounted for a finished router process.
type routerUsage struct {
	CPU          time.Duration // user + system, from rusage
	PeakRSSBytes int64         // VmHWM, sampled until exit (see vmHWM)
	RusageMaxRSS int64         // ru_maxrss, which includes the benchmark's own RSS at fork
	ExitCode     int
}

// startRouter runs `binlog-router run args...` with env added to the
// environment; its output goes to logPath.
func startRouter(bin string, args, env []string, logPath string) (*routerProc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating router log: %w", err)
	}
	cmd := exec.Command(bin, append([]string{"run"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &routerProc{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	p.Started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting binlog-router: %w", err)
	}
	p.rss = startRSSSampler(cmd.Process.Pid, 50*time.Millisecond)
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// Exited is closed when the process has exited.
func (p *routerProc) Exited() <-chan struct{} { return p.done }

// Pid is the process id.
func (p *routerProc) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM, waits for the exit (SIGKILL after timeout) and
// returns the process's resource usage. A non-zero exit is an error that
// carries the log tail.
func (p *routerProc) Stop(timeout time.Duration) (routerUsage, error) {
	p.rss.sample()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	var stopErr error
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		stopErr = fmt.Errorf("router did not exit within %s of SIGTERM", timeout)
	}
	u := p.usage()
	if stopErr == nil && u.ExitCode != 0 {
		stopErr = fmt.Errorf("router exited with code %d", u.ExitCode)
	}
	if stopErr != nil {
		return u, fmt.Errorf("%w; log tail:\n%s", stopErr, p.LogTail(20))
	}
	return u, nil
}

// Kill ends the process at once (cleanup after an error).
func (p *routerProc) Kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.rss.Stop()
}

// ExitError describes an unexpected exit, with the log tail.
func (p *routerProc) ExitError() error {
	return fmt.Errorf("router exited early (%v); log tail:\n%s", p.waitErr, p.LogTail(20))
}

// usage must be called once, after the exit.
func (p *routerProc) usage() routerUsage {
	st := p.cmd.ProcessState
	if st == nil {
		return routerUsage{ExitCode: -1}
	}
	u := routerUsage{ExitCode: st.ExitCode(), PeakRSSBytes: p.rss.Stop()}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		u.RusageMaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return u
}

// LogTail returns the last n lines of the router's log.
func (p *routerProc) LogTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

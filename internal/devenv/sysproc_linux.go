package devenv

import "syscall"

// sysProcAttr puts mariadbd in its own process group, so a terminal's ^C
// reaches only the test process, and has the kernel SIGKILL it when the
// thread that started it exits, so it never outlives a killed test. Go ends
// an OS thread only when a goroutine locked to it (runtime.LockOSThread)
// returns without unlocking (go.dev/issue/27505); the programs that use
// this package do not, so in practice that is when the process exits.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

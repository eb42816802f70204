package main

import "syscall"

// sysProcAttr puts the router in its own process group, so that ^C reaches
// only the demo, which then stops the router with SIGTERM like an
// orchestrator would; and has the kernel kill it if the demo dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

//go:build unix && !linux

package devenv

import "syscall"

// sysProcAttr puts mariadbd in its own process group. Only Linux can tie
// the child's life to ours (Pdeathsig); elsewhere a killed test process
// leaves its mariadbd running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

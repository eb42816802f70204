//go:build unix && !linux

package main

import "syscall"

// sysProcAttr puts the router in its own process group, so that ^C reaches
// only the demo. Only Linux can tie the router's life to the demo's.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

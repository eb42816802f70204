package devenv

import (
	"fmt"
	"net"
)

// freePort asks the kernel for an unused loopback port. The port is free
// only at the moment of asking; callers must retry when the bind later
// fails because someone else took it.
func freePort() (int, error) {
	p, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// freePorts asks the kernel for n distinct unused loopback ports. Each
// port's listener stays open until all n are chosen, so the kernel cannot
// hand the same port out twice, as it may to consecutive freePort calls.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

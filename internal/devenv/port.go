package devenv

import (
	"fmt"
	"net"
)

// freePort asks the kernel for an unused loopback port. The port is free
// only at the moment of asking; callers must retry when the bind later
// fails because someone else took it.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// routerBin is the binlog-router binary built once for the package.
var routerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "binlog-router-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	routerBin = filepath.Join(dir, "binlog-router")
	args := []string{"build", "-o", routerBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "../cmd/binlog-router")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building binlog-router:", err)
		os.Exit(1)
	}
	stopKafka, err := startSharedKafka()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	stopKafka()
	os.RemoveAll(dir)
	os.Exit(code)
}

package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RouterBin is the binlog-router binary Main builds for the suites.
var RouterBin string

// Main runs the end-to-end suites of m: it builds the binlog-router binary
// once into RouterBin (with -race when the suites run with it), starts the
// shared Kafka BrokerEnv names (nothing for kfake, one Apache Kafka node for
// apache), runs the suites, and removes both. Its result is the exit code
// for the suites' TestMain to pass to os.Exit; a build or broker that fails
// to start is reported on stderr with code 1.
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "binlog-router-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	RouterBin = filepath.Join(dir, "binlog-router")
	args := []string{"build", "-o", RouterBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "github.com/binlog-router/binlog-router/cmd/binlog-router")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building binlog-router:", err)
		return 1
	}
	stopKafka, err := startSharedKafka()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopKafka()
	return m.Run()
}

package devenv

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const helperEnv = "DEVENV_TEST_HOLD_MARIADB"

// TestMariaDBDiesWithItsStarter SIGKILLs a process that started a server,
// so no cleanup runs, and checks that mariadbd does not outlive it.
func TestMariaDBDiesWithItsStarter(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldMariaDB$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	var pid int
	var dir string
	lines := bufio.NewScanner(out)
	for (pid == 0 || dir == "") && lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "MARIADBD_PID="); ok {
			pid, err = strconv.Atoi(v)
			require.NoError(t, err)
		}
		if v, ok := strings.CutPrefix(lines.Text(), "DIR="); ok {
			dir = v
		}
	}
	require.NotZero(t, pid, "helper did not report a mariadbd pid")
	t.Cleanup(func() {
		if alive(pid) { // only when this test fails
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = os.RemoveAll(dir) // no Close ran to remove it
	})
	require.True(t, alive(pid), "mariadbd %d not running while its starter lives", pid)

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) {
		require.True(t, time.Now().Before(deadline), "mariadbd %d outlived the process that started it", pid)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHelperHoldMariaDB is the process killed above; it does nothing in a
// normal run.
func TestHelperHoldMariaDB(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestMariaDBDiesWithItsStarter")
	}
	m, err := StartMariaDB(context.Background(), MariaDBConfig{})
	require.NoError(t, err)
	fmt.Printf("DIR=%s\nMARIADBD_PID=%d\n", m.dir, m.proc.cmd.Process.Pid)
	select {} // until SIGKILL
}

// alive reports whether pid exists and is not a zombie awaiting its reaper.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

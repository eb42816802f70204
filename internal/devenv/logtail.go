package devenv

import (
	"fmt"
	"os"
	"strings"
)

// LogTail returns the last n lines of the server's error log, which holds
// the output of every run of this server (and of mariadb-install-db when no
// cached datadir is used). It is meant for failure messages and never fails:
// a read error is returned as text.
func (m *MariaDB) LogTail(n int) string {
	b, err := os.ReadFile(m.errorLog())
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", m.errorLog(), err)
	}
	return lastLines(string(b), n)
}

// lastLines returns the last n lines of s without a trailing newline.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if n <= 0 || s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

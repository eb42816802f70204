package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrMariaDBNotInstalled reports that mariadbd or mariadb-install-db could not
// be found in PATH, /usr/sbin or /usr/bin.
var ErrMariaDBNotInstalled = errors.New("mariadb server not installed; install it with `apt-get install mariadb-server` (Debian/Ubuntu) so that mariadbd and mariadb-install-db are available")

// binaries are the programs needed to run a private server.
type binaries struct {
	mariadbd  string
	installDB string
}

// findBinaries looks the MariaDB programs up in PATH, then in the Debian
// locations, because /usr/sbin is often missing from a non-root PATH.
func findBinaries() (binaries, error) {
	d, err := findProgram("mariadbd")
	if err != nil {
		return binaries{}, err
	}
	i, err := findProgram("mariadb-install-db")
	if err != nil {
		return binaries{}, err
	}
	return binaries{mariadbd: d, installDB: i}, nil
}

func findProgram(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("looking for %s: %w", name, ErrMariaDBNotInstalled)
}

// EnsureMariaDBInstalled makes sure mariadbd and mariadb-install-db are
// available. When they are missing and the process runs as root on a system
// with apt-get, it runs `apt-get update` and `apt-get install -y
// --no-install-recommends mariadb-server` (this is what `make demo` relies on
// for a fresh machine). Otherwise it returns an error wrapping
// ErrMariaDBNotInstalled that says what to install. It never starts a server;
// a server the package manager may start is not used by this package.
func EnsureMariaDBInstalled(ctx context.Context) error {
	if _, err := findBinaries(); err == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("not root, cannot install mariadb-server: %w", ErrMariaDBNotInstalled)
	}
	aptGet, err := exec.LookPath("apt-get")
	if err != nil {
		return fmt.Errorf("apt-get not found, cannot install mariadb-server: %w", ErrMariaDBNotInstalled)
	}
	if err := runApt(ctx, aptGet, "update"); err != nil {
		return err
	}
	if err := runApt(ctx, aptGet, "install", "-y", "--no-install-recommends", "mariadb-server"); err != nil {
		return err
	}
	if _, err := findBinaries(); err != nil {
		return fmt.Errorf("after installing mariadb-server: %w", err)
	}
	return nil
}

func runApt(ctx context.Context, aptGet string, args ...string) error {
	cmd := exec.CommandContext(ctx, aptGet, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running apt-get %v: %w\n%s", args, err, lastLines(out.String(), 20))
	}
	return nil
}

package devenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// cacheEnv names the environment variable that relocates or disables
// ("off") the cache of pristine datadirs.
const cacheEnv = "BINLOG_ROUTER_DEVENV_CACHE"

// templateMarker is written into a cached datadir before it is renamed into
// place, so a directory without it was not made by us and is not trusted.
const templateMarker = "devenv-template-complete"

// templateMu serialises template creation within the process; other
// processes race through an atomic rename instead.
var templateMu sync.Mutex

// installArgs are the mariadb-install-db arguments. The server options among
// them are the ones fixed when InnoDB files are created, and must agree with
// serverArgs.
func installArgs(datadir string) []string {
	args := []string{
		"--no-defaults",
		"--datadir=" + datadir,
		"--auth-root-authentication-method=normal",
		"--skip-test-db",
		"--skip-name-resolve",
		"--innodb-log-file-size=" + innodbLogFileSize,
		"--innodb-buffer-pool-size=" + innodbBufferPoolSize,
		"--performance-schema=OFF",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return args
}

// prepareDataDir fills the empty directory datadir with system tables, from
// the cached template when caching is on, else by running mariadb-install-db.
func prepareDataDir(ctx context.Context, bins binaries, datadir string) error {
	tmpl, err := templateDataDir(ctx, bins)
	if err != nil {
		return err
	}
	if tmpl == "" {
		return installDataDir(ctx, bins, datadir)
	}
	if err := copyTree(tmpl, datadir); err != nil {
		return fmt.Errorf("copying datadir template %s: %w", tmpl, err)
	}
	return nil
}

func installDataDir(ctx context.Context, bins binaries, datadir string) error {
	cmd := exec.CommandContext(ctx, bins.installDB, installArgs(datadir)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running mariadb-install-db for %s: %w\n%s", datadir, err, lastLines(out.String(), 30))
	}
	return nil
}

// templateDataDir returns the cached pristine datadir for this mariadbd
// version and these install arguments, creating it if needed, or "" when
// caching is off.
func templateDataDir(ctx context.Context, bins binaries) (string, error) {
	root := cacheRoot()
	if root == "" {
		return "", nil
	}
	version, err := exec.CommandContext(ctx, bins.mariadbd, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s --version: %w", bins.mariadbd, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s", bins.mariadbd, version, strings.Join(installArgs(""), " "))
	dir := filepath.Join(root, "mariadb-datadir-"+hex.EncodeToString(h.Sum(nil))[:16])

	templateMu.Lock()
	defer templateMu.Unlock()
	if _, err := os.Stat(filepath.Join(dir, templateMarker)); err == nil {
		return dir, nil
	}
	if _, err := os.Stat(dir); err == nil {
		return "", fmt.Errorf("datadir template %s is incomplete; remove it", dir)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("creating datadir cache %s (set %s=off to disable it): %w", root, cacheEnv, err)
	}
	removeStaleTemps(root)
	tmp, err := os.MkdirTemp(root, "tmp-")
	if err != nil {
		return "", fmt.Errorf("creating datadir template: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := installDataDir(ctx, bins, tmp); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, templateMarker), version, 0o644); err != nil {
		return "", fmt.Errorf("marking datadir template: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have won the race; its template is as good.
		if _, statErr := os.Stat(filepath.Join(dir, templateMarker)); statErr == nil {
			return dir, nil
		}
		return "", fmt.Errorf("publishing datadir template %s: %w", dir, err)
	}
	return dir, nil
}

// cacheRoot is where templates live, or "" when caching is disabled.
func cacheRoot() string {
	switch v := os.Getenv(cacheEnv); v {
	case "off":
		return ""
	case "":
	default:
		return v
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "binlog-router", "devenv")
	}
	return filepath.Join(os.TempDir(), "binlog-router-devenv-cache")
}

// removeStaleTemps deletes half-made templates left by killed processes.
// An install takes seconds, so anything older than ten minutes is abandoned.
func removeStaleTemps(root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "tmp-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 10*time.Minute {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// copyTree copies the regular files and directories under src into dst,
// which must exist.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o700)
		case rel == templateMarker:
			return nil
		case d.Type().IsRegular():
			return copyFile(path, target)
		default:
			return fmt.Errorf("unexpected file type %s at %s", d.Type(), path)
		}
	})
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	_, err = io.Copy(out, in)
	return err
}

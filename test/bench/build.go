package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// moduleRoot returns the directory of the main module's go.mod, so the
// benchmark works from any directory inside the repository.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == "/dev/null" {
		return "", fmt.Errorf("not inside a Go module; run from the binlog-router repository")
	}
	return filepath.Dir(mod), nil
}

// goBuild builds package pkg (relative to root) into out, without -race.
func goBuild(ctx context.Context, root, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, stderr.String())
	}
	return nil
}

// goModuleVersion returns the version of module path in the build list.
func goModuleVersion(ctx context.Context, root, path string) string {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", path)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// gitRevision describes the tree at root ("abc1234-dirty" when it has
// uncommitted changes), or "unknown".
func gitRevision(ctx context.Context, root string) string {
	cmd := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

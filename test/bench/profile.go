package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile to dir/name.pprof until the
// returned stop is called; with no dir it does nothing.
func startCPUProfile(dir, name string) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating profile dir: %w", err)
	}
	path := filepath.Join(dir, name+".pprof")
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting CPU profile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("writing profile %s: %w", path, err)
		}
		return nil
	}, nil
}

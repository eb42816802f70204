package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile to dir/name.pprof until the
// returned stop is called, and the process's allocation profile at the
// start and at the stop to dir/name.allocs-start.pprof and
// dir/name.allocs.pprof: what was allocated in between is
//
//	go tool pprof -sample_index=alloc_space -base name.allocs-start.pprof name.allocs.pprof
//
// With no dir it does nothing.
func startCPUProfile(dir, name string) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating profile dir: %w", err)
	}
	if err := writeAllocs(filepath.Join(dir, name+".allocs-start.pprof")); err != nil {
		return nil, err
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
		return writeAllocs(filepath.Join(dir, name+".allocs.pprof"))
	}, nil
}

// writeAllocs writes the allocation profile of the process so far to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating profile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("writing profile %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing profile %s: %w", path, err)
	}
	return nil
}

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// vmHWM returns a process's peak resident set size (VmHWM in
// /proc/<pid>/status), in bytes.
//
// The benchmark uses it rather than the Maxrss of wait4's rusage: on
// Linux a child started with vfork (as Go's os/exec does) has the parent's
// peak RSS folded into its own maxrss when it execs, so the rusage of a
// router started by a benchmark that holds hundreds of MB reports the
// benchmark's size, not the router's. VmHWM belongs to the router's own
// address space.
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing VmHWM %q: %w", v, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// rssSampler reads a process's VmHWM every interval until stopped, so the
// peak is known even though /proc/<pid> vanishes at exit.
type rssSampler struct {
	pid  int
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	mu   sync.Mutex
	peak int64
}

func startRSSSampler(pid int, interval time.Duration) *rssSampler {
	s := &rssSampler{pid: pid, stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-t.C:
			case <-s.stop:
				return
			}
		}
	}()
	return s
}

func (s *rssSampler) sample() {
	if v, err := vmHWM(s.pid); err == nil {
		s.mu.Lock()
		s.peak = max(s.peak, v)
		s.mu.Unlock()
	}
}

// Stop ends sampling and returns the highest VmHWM seen; it may be
// called more than once.
func (s *rssSampler) Stop() int64 {
	s.once.Do(func() { close(s.stop) })
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

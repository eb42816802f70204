package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// rssKB is a process's resident set size from /proc.
func rssKB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// RSSSampler records the largest RSS of a process, sampled every 100 ms.
type RSSSampler struct {
	maxKB  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
}

// SampleRSS starts sampling process pid until Stop.
func SampleRSS(pid int) *RSSSampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &RSSSampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if kb, err := rssKB(pid); err == nil && kb > s.maxKB.Load() {
				s.maxKB.Store(kb)
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peak in MiB.
func (s *RSSSampler) Stop() float64 {
	s.cancel()
	<-s.done
	return float64(s.maxKB.Load()) / 1024
}

// RSSLimitMB bounds the router's memory in the fault tests: the race
// detector multiplies memory use several times.
func RSSLimitMB() float64 {
	if raceEnabled {
		return 300
	}
	return 150
}

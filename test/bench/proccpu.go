package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on Linux).
const clockTicks = 100

// procCPU returns the user+system CPU time a process has used so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading CPU time of process %d: %w", pid, err)
	}
	// Fields after the command name, which is in parentheses and may
	// contain spaces: state is field 3, utime 14, stime 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("parsing /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("parsing /proc/%d/stat: %d fields", pid, len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parsing /proc/%d/stat times", pid)
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// cpuMeter measures the CPU the broker and the database server use
// between start and stop, to show where a run's cores went.
type cpuMeter struct {
	pids   map[string]int
	before map[string]time.Duration
}

func newCPUMeter(pids map[string]int) *cpuMeter {
	m := &cpuMeter{pids: pids, before: map[string]time.Duration{}}
	for name, pid := range pids {
		if d, err := procCPU(pid); err == nil {
			m.before[name] = d
		}
	}
	return m
}

// used returns the CPU seconds each process used since newCPUMeter.
func (m *cpuMeter) used() map[string]float64 {
	out := map[string]float64{}
	for name, pid := range m.pids {
		if d, err := procCPU(pid); err == nil {
			out[name] = (d - m.before[name]).Seconds()
		}
	}
	return out
}

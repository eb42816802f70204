package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc times (100 on Linux).
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
	return ticks(ut + st), nil
}

// systemBusy returns the CPU time all processes of the machine have used
// (user, nice, system, irq, softirq, steal), from /proc/stat.
func systemBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("reading /proc/stat: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("parsing /proc/stat")
	}
	var busy uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing /proc/stat: %w", err)
		}
		busy += v
	}
	return ticks(busy), nil
}

func ticks(n uint64) time.Duration { return time.Duration(n) * time.Second / clockTicks }

// cpuMeter measures, between its creation and used(), the CPU of the
// broker, the database server, the benchmark process itself, and the
// whole machine, to show where a run's cores went and how much other
// processes (not part of the benchmark) took.
type cpuMeter struct {
	pids    map[string]int
	before  map[string]time.Duration
	sys     time.Duration
	started time.Time
}

func newCPUMeter(pids map[string]int) *cpuMeter {
	m := &cpuMeter{pids: map[string]int{"bench": os.Getpid()}, before: map[string]time.Duration{}, started: time.Now()}
	for name, pid := range pids {
		m.pids[name] = pid
	}
	for name, pid := range m.pids {
		if d, err := procCPU(pid); err == nil {
			m.before[name] = d
		}
	}
	m.sys, _ = systemBusy()
	return m
}

// cpuUse is the CPU seconds used during a measurement.
type cpuUse struct {
	Broker   float64 `json:"broker"` // kfake's process or Apache Kafka's JVM
	MariaDB  float64 `json:"mariadbd"`
	Bench    float64 `json:"bench"`  // the benchmark process (loaders, consumers, raw clients)
	Router   float64 `json:"router"` // the router process, when one ran
	Foreign  float64 `json:"others"` // every other process on the machine
	Seconds  float64 `json:"wall_seconds"`
	Machine  float64 `json:"machine"` // all processes
	ForeignC float64 `json:"others_cores"`
}

// used returns the CPU used since newCPUMeter; router is the router's CPU
// in that time (0 when none ran).
func (m *cpuMeter) used(router time.Duration) cpuUse {
	get := func(name string) float64 {
		pid, ok := m.pids[name]
		if !ok {
			return 0
		}
		d, err := procCPU(pid)
		if err != nil {
			return 0
		}
		return (d - m.before[name]).Seconds()
	}
	u := cpuUse{Broker: get("broker"), MariaDB: get("mariadbd"), Bench: get("bench"), Router: router.Seconds(),
		Seconds: time.Since(m.started).Seconds()}
	if sys, err := systemBusy(); err == nil {
		u.Machine = (sys - m.sys).Seconds()
		u.Foreign = max(0, u.Machine-u.Broker-u.MariaDB-u.Bench-u.Router)
		u.ForeignC = u.Foreign / u.Seconds
	}
	return u
}

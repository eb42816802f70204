package main

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// machine describes where the figures were measured.
type machine struct {
	CPUs       int     `json:"cpus"`
	CPUModel   string  `json:"cpu_model"`
	MemoryGiB  float64 `json:"memory_gib"`
	MariaDB    string  `json:"mariadb_version"`
	Go         string  `json:"go_version"`
	Kfake      string  `json:"kfake_version"`
	Kafka      string  `json:"kafka"`      // the broker of the run, e.g. "kfake 01f206a7e32c" or "Apache Kafka 4.4.0 (...)"
	BrokerCPU  string  `json:"broker_cpu"` // its column in the CPU split
	FranzGo    string  `json:"franz_go_version"`
	GoMySQL    string  `json:"go_mysql_version"`
	Revision   string  `json:"revision"` // git describe --always --dirty of the tree the router was built from
	RouterEnv  string  `json:"router_env,omitempty"`
	RouterArgs string  `json:"router_args,omitempty"`
	KafkaProps string  `json:"kafka_props,omitempty"`
}

func describeMachine(ctx context.Context, e *env, o *options) machine {
	m := machine{
		CPUs:       runtime.NumCPU(),
		CPUModel:   procField("/proc/cpuinfo", "model name"),
		Go:         runtime.Version(),
		Kfake:      goModuleVersion(ctx, e.root, "github.com/twmb/franz-go/pkg/kfake"),
		FranzGo:    goModuleVersion(ctx, e.root, "github.com/twmb/franz-go"),
		GoMySQL:    goModuleVersion(ctx, e.root, "github.com/go-mysql-org/go-mysql"),
		Revision:   gitRevision(ctx, e.root),
		Kafka:      e.kafka.Desc,
		BrokerCPU:  e.kafka.CPUName,
		RouterEnv:  strings.Join(o.RouterEnv, ","),
		RouterArgs: strings.Join(o.RouterArgs, ","),
		KafkaProps: strings.Join(o.KafkaProps, ","),
	}
	if kb, err := strconv.ParseFloat(strings.Fields(procField("/proc/meminfo", "MemTotal") + " 0")[0], 64); err == nil {
		m.MemoryGiB = kb / (1 << 20)
	}
	if err := e.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&m.MariaDB); err != nil {
		m.MariaDB = "unknown"
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc
// file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// kfakeCommit is the commit in a Go pseudo-version
// (v0.0.0-20260918054303-01f206a7e32c -> 01f206a7e32c).
func kfakeCommit(version string) string {
	if i := strings.LastIndexByte(version, '-'); i >= 0 && len(version)-i-1 == 12 {
		return version[i+1:]
	}
	return version
}

// kafka describes the broker; results written before -kafka existed ran
// on kfake.
func (m machine) kafka() string {
	if m.Kafka != "" {
		return m.Kafka
	}
	return "kfake " + kfakeCommit(m.Kfake)
}

// brokerCPU names the broker's column in the CPU split.
func (m machine) brokerCPU() string {
	if m.BrokerCPU != "" {
		return m.BrokerCPU
	}
	return "kfake"
}

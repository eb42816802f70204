package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// The brokers a run can use (-kafka).
const (
	kafkaKfake  = "kfake"
	kafkaApache = "apache"
)

// apacheHeap and apacheJVMFlags are the benchmark's Apache Kafka JVM: a
// heap as the start scripts give it and the full JIT with G1 (devenv's
// test default, C1 only with the serial collector, starts faster but runs
// slower).
const apacheHeap = "1g"

var apacheJVMFlags = []string{"-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35"}

// kafkaSide is the Kafka of a run: a kfake process (test/kfakeserver) or a
// private Apache Kafka node (one KRaft broker and controller in one JVM).
// Either runs in its own process, whose CPU the measurements account as
// the broker's.
type kafkaSide struct {
	Brokers []string
	CPUName string // the broker's column in the CPU split
	Desc    string // for the machine line
	Pid     func() int
	Close   func()
}

// startKafkaSide starts the broker o.Kafka names.
func startKafkaSide(ctx context.Context, e *env, o *options) (*kafkaSide, error) {
	if o.Kafka == kafkaApache {
		return startApacheSide(ctx, o)
	}
	kfakeBin := filepath.Join(e.tmp, "kfakeserver")
	if err := goBuild(ctx, e.root, "./test/kfakeserver", kfakeBin); err != nil {
		return nil, err
	}
	k, err := startKfake(ctx, kfakeBin, o.Partitions, filepath.Join(e.tmp, "kfake.log"))
	if err != nil {
		return nil, err
	}
	version := goModuleVersion(ctx, e.root, "github.com/twmb/franz-go/pkg/kfake")
	return &kafkaSide{Brokers: k.Brokers, CPUName: "kfake", Desc: "kfake " + kfakeCommit(version),
		Pid: k.Pid, Close: k.Close}, nil
}

// startApacheSide starts a private Apache Kafka node with the benchmark's
// JVM settings, every topic with o.Partitions partitions.
func startApacheSide(ctx context.Context, o *options) (*kafkaSide, error) {
	a, err := startApache(ctx, o)
	if err != nil {
		return nil, err
	}
	return apacheSide(a), nil
}

// startApache starts the benchmark's Apache Kafka node: its JVM settings,
// every topic with o.Partitions partitions, records up to the benchmark's
// largest row, and o.KafkaProps.
func startApache(ctx context.Context, o *options) (*devenv.ApacheKafka, error) {
	props := map[string]string{
		"num.partitions":    strconv.Itoa(o.Partitions),
		"message.max.bytes": strconv.Itoa(brokerMessageMaxBytes(o)),
	}
	for _, kv := range o.KafkaProps {
		k, v, _ := strings.Cut(kv, "=")
		props[k] = v
	}
	a, err := devenv.StartApacheKafka(ctx, devenv.ApacheKafkaConfig{Heap: apacheHeap, JVMFlags: apacheJVMFlags, Props: props, TempDir: o.KafkaDir})
	if err != nil {
		return nil, fmt.Errorf("starting Apache Kafka: %w", err)
	}
	return a, nil
}

// apacheSide presents node a as a run's Kafka; Close stops the node.
func apacheSide(a *devenv.ApacheKafka) *kafkaSide {
	desc := fmt.Sprintf("Apache Kafka %s (1 KRaft node, %s, -Xmx%s, G1, data in %s)",
		a.Version(), javaVersion(a.Java()), apacheHeap, filepath.Dir(a.Dir()))
	return &kafkaSide{Brokers: a.Brokers(), CPUName: "kafka JVM", Desc: desc,
		Pid: func() int { return a.Pid(0) }, Close: a.Close}
}

// javaVersion is the first line of `java -version`, e.g. `openjdk
// version "17.0.15" 2025-04-15`.
func javaVersion(java string) string {
	out, err := exec.Command(java, "-version").CombinedOutput()
	if err != nil {
		return "java (version unknown)"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.ReplaceAll(line, `"`, "")
}

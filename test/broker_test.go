package test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// brokerEnv selects the Kafka the suites run on: "kfake" (the default, an
// in-process kfake per test) or "apache" (one private Apache Kafka node
// started for the whole test binary and reached as if through
// KAFKA_BROKERS; tests that need a broker of their own start one with
// devenv.NewApacheKafka). `make test` runs the Kafka-side suites once per
// broker.
const brokerEnv = "BINLOG_ROUTER_TEST_BROKER"

// sharedApache is the test binary's Apache Kafka node, nil on kfake.
var sharedApache *devenv.ApacheKafka

// onApache reports whether this run is the Apache Kafka pass.
func onApache() bool { return os.Getenv(brokerEnv) == "apache" }

// startSharedKafka starts the shared Apache Kafka node when brokerEnv asks
// for it and points KAFKA_BROKERS at it.
func startSharedKafka() (stop func(), err error) {
	switch v := os.Getenv(brokerEnv); v {
	case "", "kfake":
		return func() {}, nil
	case "apache":
	default:
		return nil, fmt.Errorf("%s=%q: want kfake or apache", brokerEnv, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	a, err := devenv.StartApacheKafka(ctx, devenv.ApacheKafkaConfig{})
	if err != nil {
		return nil, fmt.Errorf("starting the shared Apache Kafka: %w", err)
	}
	fmt.Fprintf(os.Stderr, "apache kafka %s on %s (started in %v)\n", a.Version(), strings.Join(a.Brokers(), ","), time.Since(start).Round(time.Millisecond))
	sharedApache = a
	os.Setenv(devenv.BrokersEnv, strings.Join(a.Brokers(), ","))
	return a.Close, nil
}

// brokerName names the broker of this run in test logs and reports.
func brokerName() string {
	if onApache() {
		return "apache-kafka-" + devenv.KafkaVersion()
	}
	return "kfake"
}

// privateApache starts an Apache Kafka node of the test's own (one it may
// stop, kill or misconfigure), or skips on the kfake pass.
func privateApache(t *testing.T, cfg devenv.ApacheKafkaConfig) *devenv.Kafka {
	t.Helper()
	if !onApache() {
		t.Skipf("runs on the Apache Kafka pass (%s=apache)", brokerEnv)
	}
	return devenv.NewApacheKafka(t, cfg)
}

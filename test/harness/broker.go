package harness

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// BrokerEnv selects the Kafka the suites run on: "kfake" (the default, an
// in-process kfake per test) or "apache" (one private Apache Kafka node
// started for the whole test binary and reached as if through
// KAFKA_BROKERS; tests that need a broker of their own start one with
// devenv.NewApacheKafka). `make test` runs the Kafka-side suites once per
// broker.
const BrokerEnv = "BINLOG_ROUTER_TEST_BROKER"

// SharedApache is the test binary's Apache Kafka node, nil on kfake.
var SharedApache *devenv.ApacheKafka

// sharedProxy is a KafkaProxy in front of SharedApache's listener
// proxiedListener, which advertises the proxy's address: a router given
// sharedProxy.addr() talks to the node only through it. nil on kfake.
var sharedProxy *KafkaProxy

const proxiedListener = "PROXIED"

// sharedApacheConfig is the shared node's configuration: transaction
// version 2 (the 4.x default) named explicitly, as the crash and
// end-to-end suites prove that protocol here (TestTransactionVersion0
// proves the other); timed-out transactions aborted within a second of
// their timeout (the stall test), and a log cleaner that looks for work
// every half second (the compaction test). Neither changes what the other
// suites see.
func sharedApacheConfig(proxy *KafkaProxy) devenv.ApacheKafkaConfig {
	return devenv.ApacheKafkaConfig{
		FormatArgs: []string{"--feature", "transaction.version=2"},
		Props: map[string]string{
			"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
			"log.cleaner.backoff.ms": "500",
		},
		ExtraListeners: map[string]string{proxiedListener: "PLAINTEXT"},
		Advertise:      func(string, int) string { return proxy.addr() },
	}
}

// OnApache reports whether this run is the Apache Kafka pass.
func OnApache() bool { return os.Getenv(BrokerEnv) == "apache" }

// startSharedKafka starts the shared Apache Kafka node when BrokerEnv asks
// for it and points KAFKA_BROKERS at it.
func startSharedKafka() (stop func(), err error) {
	switch v := os.Getenv(BrokerEnv); v {
	case "", "kfake":
		return func() {}, nil
	case "apache":
	default:
		return nil, fmt.Errorf("%s=%q: want kfake or apache", BrokerEnv, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	proxy, err := newKafkaProxy()
	if err != nil {
		return nil, err
	}
	a, err := devenv.StartApacheKafka(ctx, sharedApacheConfig(proxy))
	if err != nil {
		proxy.close()
		return nil, fmt.Errorf("starting the shared Apache Kafka: %w", err)
	}
	proxy.setTarget(a.ListenerAddrs(proxiedListener)[0])
	fmt.Fprintf(os.Stderr, "apache kafka %s on %s, proxied at %s (started in %v)\n", a.Version(), strings.Join(a.Brokers(), ","),
		proxy.addr(), time.Since(start).Round(time.Millisecond))
	SharedApache, sharedProxy = a, proxy
	os.Setenv(devenv.BrokersEnv, strings.Join(a.Brokers(), ","))
	return func() {
		stopCluster3()
		a.Close()
		proxy.close()
	}, nil
}

// ProxiedRouter makes the router of e (and the CLI commands) reach the
// shared Apache Kafka node through sharedProxy, and returns the proxy
// (nil on kfake). Its traps are disarmed at the end of the test.
func ProxiedRouter(t testing.TB, e *Env) *KafkaProxy {
	t.Helper()
	if e.Proxy != nil {
		return e.Proxy
	}
	if sharedProxy == nil || e.Kafka.Apache != nil {
		return nil
	}
	e.Proxy, e.routerBrokers = sharedProxy, []string{sharedProxy.addr()}
	t.Cleanup(sharedProxy.reset)
	return sharedProxy
}

// PrivateApacheProxied starts a private Apache Kafka cluster (as
// PrivateApache) whose nodes advertise, on an extra listener, one proxy
// each; the router of e reaches the cluster through them, and e.proxy is
// the first node's.
func PrivateApacheProxied(t testing.TB, cfg devenv.ApacheKafkaConfig) (*devenv.Kafka, []*KafkaProxy) {
	t.Helper()
	if !OnApache() {
		t.Skipf("runs on the Apache Kafka pass (%s=apache)", BrokerEnv)
	}
	proxies, err := withProxies(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeProxies(proxies) })
	k := newPrivateApache(t, cfg)
	aimProxies(proxies, k.Apache)
	return k, proxies
}

// withProxies gives every node of cfg the listener proxiedListener,
// advertising a new KafkaProxy per node, and returns the proxies; aim
// them at the nodes (aimProxies) once the cluster runs, and close them
// (closeProxies) after it.
func withProxies(cfg *devenv.ApacheKafkaConfig) ([]*KafkaProxy, error) {
	proxies := make([]*KafkaProxy, max(cfg.Nodes, 1))
	for i := range proxies {
		var err error
		if proxies[i], err = newKafkaProxy(); err != nil {
			closeProxies(proxies)
			return nil, err
		}
	}
	cfg.ExtraListeners = map[string]string{proxiedListener: "PLAINTEXT"}
	cfg.Advertise = func(_ string, node int) string { return proxies[node].addr() }
	return proxies, nil
}

// aimProxies points each proxy of withProxies at its node's listener.
func aimProxies(proxies []*KafkaProxy, a *devenv.ApacheKafka) {
	for i, addr := range a.ListenerAddrs(proxiedListener) {
		proxies[i].setTarget(addr)
	}
}

// closeProxies closes the proxies that were started.
func closeProxies(proxies []*KafkaProxy) {
	for _, p := range proxies {
		if p != nil {
			p.close()
		}
	}
}

// UseProxies makes the router of e reach its Kafka through proxies.
func (e *Env) UseProxies(proxies []*KafkaProxy) {
	e.Proxy, e.routerBrokers = proxies[0], nil
	for _, p := range proxies {
		e.routerBrokers = append(e.routerBrokers, p.addr())
	}
}

// BrokerName names the Kafka of e in test logs.
func (e *Env) BrokerName() string {
	if a := e.Kafka.Apache; a != nil {
		kind := "private"
		if a == cluster3 {
			kind = "shared"
		}
		return fmt.Sprintf("apache-kafka-%s (%d node(s), %s)", a.Version(), len(a.Brokers()), kind)
	}
	return BrokerName()
}

// BrokerName names the broker of this run in test logs and reports.
func BrokerName() string {
	if OnApache() {
		return "apache-kafka-" + devenv.KafkaVersion()
	}
	return "kfake"
}

// PrivateApache starts an Apache Kafka node of the test's own (one it may
// stop, kill or misconfigure), or skips on the kfake pass.
func PrivateApache(t *testing.T, cfg devenv.ApacheKafkaConfig) *devenv.Kafka {
	t.Helper()
	if !OnApache() {
		t.Skipf("runs on the Apache Kafka pass (%s=apache)", BrokerEnv)
	}
	return newPrivateApache(t, cfg)
}

// newPrivateApache starts the cluster of PrivateApache; a failed test
// keeps its nodes' logs (keepLog).
func newPrivateApache(t testing.TB, cfg devenv.ApacheKafkaConfig) *devenv.Kafka {
	t.Helper()
	k := devenv.NewApacheKafka(t, cfg)
	t.Cleanup(func() {
		if t.Failed() {
			for i := range k.Apache.Brokers() {
				keepLog(t, fmt.Sprintf("kafka-node%d", i), k.Apache.LogTail(i, 1<<30))
			}
		}
	})
	return k
}

package harness

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// The three-node Apache Kafka cluster (replication factor 3,
// min.insync.replicas=2) is started once per test binary, at its first
// use, and shared by the tests that need a real cluster: three JVMs cost
// about half a minute to start on two cores. A test may stop, kill or
// pause nodes; at its end every node runs again and every partition is
// fully replicated before the next test gets the cluster. Each node also
// advertises a KafkaProxy on a second listener, for tests whose router
// must reach the cluster through proxies (Cluster3Proxies).
var (
	cluster3Once    sync.Once
	cluster3        *devenv.ApacheKafka
	cluster3Proxies []*KafkaProxy // one per node, on its listener proxiedListener
	cluster3Err     error
	cluster3Mu      sync.Mutex // one test at a time
)

// Cluster3Config is shared by every user of the cluster: timed-out
// transactions are aborted within a second of their timeout.
func Cluster3Config() devenv.ApacheKafkaConfig {
	return devenv.ApacheKafkaConfig{
		Nodes: 3,
		Props: map[string]string{
			"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
		},
	}
}

// SharedCluster3 returns the shared three-node cluster, starting it at
// first use; it skips on the kfake pass.
func SharedCluster3(t testing.TB) *devenv.Kafka {
	t.Helper()
	if !OnApache() {
		t.Skipf("runs on the Apache Kafka pass (%s=apache)", BrokerEnv)
	}
	cluster3Once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		cluster3, cluster3Proxies, cluster3Err = startCluster3(ctx)
		if cluster3Err == nil {
			fmt.Fprintf(os.Stderr, "apache kafka three-node cluster on %s (started in %v)\n",
				strings.Join(cluster3.Brokers(), ","), time.Since(start).Round(time.Millisecond))
		}
	})
	if cluster3Err != nil {
		t.Fatalf("starting the shared three-node Apache Kafka cluster: %v", cluster3Err)
	}
	cluster3Mu.Lock()
	t.Cleanup(func() {
		defer cluster3Mu.Unlock()
		if err := healCluster(cluster3); err != nil {
			t.Errorf("restoring the shared three-node cluster: %v", err)
		}
	})
	return &devenv.Kafka{Brokers: cluster3.Brokers(), Apache: cluster3}
}

// startCluster3 starts the shared cluster with a KafkaProxy in front of
// each node's listener proxiedListener, which advertises it.
func startCluster3(ctx context.Context) (*devenv.ApacheKafka, []*KafkaProxy, error) {
	cfg := Cluster3Config()
	proxies, err := withProxies(&cfg)
	if err != nil {
		return nil, nil, err
	}
	a, err := devenv.StartApacheKafka(ctx, cfg)
	if err != nil {
		closeProxies(proxies)
		return nil, nil, err
	}
	aimProxies(proxies, a)
	return a, proxies, nil
}

// Cluster3Proxies makes the router of e, on the shared three-node cluster
// (SharedCluster3), reach it through one KafkaProxy per node, and returns
// them; their traps are disarmed at the end of the test.
func Cluster3Proxies(t testing.TB, e *Env) []*KafkaProxy {
	t.Helper()
	if e.Kafka.Apache != cluster3 || cluster3 == nil {
		t.Fatal("Cluster3Proxies: the env is not on the shared three-node cluster")
	}
	e.UseProxies(cluster3Proxies)
	for _, p := range cluster3Proxies {
		t.Cleanup(p.reset)
	}
	return cluster3Proxies
}

// stopCluster3 stops the shared cluster and its proxies if it was started.
func stopCluster3() {
	if cluster3 != nil {
		cluster3.Close()
	}
	closeProxies(cluster3Proxies)
}

// healCluster continues paused nodes, starts stopped ones and waits until
// every partition is fully replicated.
func healCluster(a *devenv.ApacheKafka) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stopped []int
	for i := range a.Brokers() {
		if a.Running(i) {
			_ = a.ResumeNode(i)
		} else {
			stopped = append(stopped, i)
		}
	}
	for _, i := range stopped {
		if err := a.StartNode(ctx, i); err != nil {
			return err
		}
	}
	if err := a.WaitBrokers(ctx, len(a.Brokers())); err != nil {
		return err
	}
	return WaitFullyReplicated(ctx, a.Brokers())
}

// WaitFullyReplicated waits until every partition of every topic has a
// leader and all its replicas in sync.
func WaitFullyReplicated(ctx context.Context, brokers []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last string
	for {
		last = underReplicated(ctx, adm)
		if last == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not fully replicated: %s", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// underReplicated names a partition without a leader or with a replica
// out of sync, or says why metadata could not be read; "" when none.
func underReplicated(ctx context.Context, adm *kadm.Client) string {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	m, err := adm.Metadata(rctx)
	if err != nil {
		return err.Error()
	}
	for _, td := range m.Topics {
		if td.Err != nil {
			return fmt.Sprintf("topic %s: %v", td.Topic, td.Err)
		}
		for _, p := range td.Partitions {
			if p.Leader < 0 || len(p.ISR) < len(p.Replicas) {
				return fmt.Sprintf("%s/%d: leader %d, replicas %v, in sync %v", td.Topic, p.Partition, p.Leader, p.Replicas, p.ISR)
			}
		}
	}
	return ""
}

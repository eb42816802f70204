package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaHooks produces to a kfake cluster through two clients sharing
// the hooks at once (kprom's hooks panic there) and reads the counters.
func TestKafkaHooks(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()

	m := New(nil)
	opts := []kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.WithHooks(m.KafkaHooks()...)}
	producer, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic("orders"))...)
	if err != nil {
		t.Fatal(err)
	}
	other, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := other.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	other.Close()

	for range 3 {
		if err := producer.ProduceSync(ctx, &kgo.Record{Value: []byte("0123456789")}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	// A record that fails (its context is already cancelled) is a produce
	// error.
	failed, cancelFailed := context.WithCancel(ctx)
	cancelFailed()
	if err := producer.ProduceSync(failed, &kgo.Record{Value: []byte("x")}).FirstErr(); err == nil {
		t.Fatal("produce with a cancelled context succeeded")
	}
	producer.Close()

	mfs := gather(t, m)
	if got := value(t, mfs, "binlog_router_kafka_produce_records_total"); got != 3 {
		t.Errorf("produce_records_total = %v, want 3", got)
	}
	if got := value(t, mfs, "binlog_router_errors_total", "kind", "produce"); got != 1 {
		t.Errorf("errors_total{kind=produce} = %v, want 1", got)
	}
	for _, name := range []string{
		"binlog_router_kafka_connects_total",
		"binlog_router_kafka_disconnects_total",
		"binlog_router_kafka_write_bytes_total",
		"binlog_router_kafka_read_bytes_total",
		"binlog_router_kafka_produce_batches_total",
		"binlog_router_kafka_produce_bytes_total",
		"binlog_router_kafka_request_duration_seconds",
	} {
		if got := value(t, mfs, name); got <= 0 {
			t.Errorf("%s = %v, want > 0", name, got)
		}
	}
	if got := value(t, mfs, "binlog_router_kafka_connect_errors_total"); got != 0 {
		t.Errorf("connect_errors_total = %v, want 0", got)
	}
}

func TestKafkaConnectErrors(t *testing.T) {
	m := New(nil)
	// Port 1 on loopback refuses connections.
	cl, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"), kgo.WithHooks(m.KafkaHooks()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err == nil {
		t.Fatal("ping 127.0.0.1:1 succeeded")
	}
	if got := value(t, gather(t, m), "binlog_router_kafka_connect_errors_total"); got < 1 {
		t.Errorf("connect_errors_total = %v, want >= 1", got)
	}
}

package inbox_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/inboxtest"
)

// brokerEnv selects the Kafka the consumer tests run on: "kfake" (the
// default, an in-process kfake per test, or KAFKA_BROKERS when set) or
// "apache" (one private Apache Kafka node, started at the first test that
// asks for a broker and shared by the package's tests).
const brokerEnv = "BINLOG_ROUTER_TEST_BROKER"

// sharedApache is the package's Apache Kafka node on the Apache pass.
var sharedApache struct {
	once  sync.Once
	node  *devenv.ApacheKafka
	err   error
	spent time.Duration
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedApache.node != nil {
		sharedApache.node.Close()
	}
	os.Exit(code)
}

// newKafka is the Kafka a test's consumers and producers reach: a kfake
// cluster of the test's own, or the shared Apache Kafka node (topic,
// group and consumer names then come from unique).
func newKafka(t *testing.T) *devenv.Kafka {
	t.Helper()
	switch v := os.Getenv(brokerEnv); v {
	case "", "kfake":
		return devenv.NewKafka(t)
	case "apache":
	default:
		t.Fatalf("%s=%q: want kfake or apache", brokerEnv, v)
	}
	sharedApache.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		start := time.Now()
		sharedApache.node, sharedApache.err = devenv.StartApacheKafka(ctx, devenv.ApacheKafkaConfig{})
		sharedApache.spent = time.Since(start)
		if sharedApache.err == nil {
			t.Logf("apache kafka %s started in %v", sharedApache.node.Version(), sharedApache.spent.Round(time.Millisecond))
		}
	})
	if sharedApache.err != nil {
		t.Fatalf("starting the shared Apache Kafka: %v", sharedApache.err)
	}
	return &devenv.Kafka{Brokers: sharedApache.node.Brokers()}
}

// unique names a topic, group or consumer for one test.
var unique = inboxtest.Unique

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// produceToPartitions produces recs to the partitions they name, creating
// the topic with three partitions if needed.
func produceToPartitions(t *testing.T, k *devenv.Kafka, recs []*kgo.Record) {
	t.Helper()
	inboxtest.ProduceRecords(t, k.Brokers, recs, kgo.RecordPartitioner(kgo.ManualPartitioner()))
}

// readRecords reads topic from its start, read_committed, until n records
// arrived (more may arrive in the last poll); the timeout passing first
// fails the test.
func readRecords(t *testing.T, brokers []string, topic string, n int, timeout time.Duration) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(100*time.Millisecond),
		kgo.MetadataMaxAge(300*time.Millisecond),
		kgo.FetchMaxWait(100*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s: timed out after %s", len(out), n, topic, timeout)
		}
		for _, e := range fs.Errors() {
			t.Logf("fetch error %s/%d: %v", e.Topic, e.Partition, e.Err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// recordsOf reads exactly n records of topic and checks that no more come.
func recordsOf(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	recs := readRecords(t, brokers, topic, n, 30*time.Second)
	if len(recs) != n {
		t.Fatalf("%s holds %d records, want %d", topic, len(recs), n)
	}
	return recs
}

// recordHeader is the value of r's header key, "" if it has none.
func recordHeader(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// newAdmin is an admin client of brokers, closed when the test ends.
func newAdmin(t *testing.T, brokers []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// committedTotal sums group's committed offsets on topic (partitions start
// at offset 0, so without transactions it is the number of records
// consumed).
func committedTotal(t *testing.T, brokers []string, group, topic string) int64 {
	t.Helper()
	var total int64
	for _, o := range committedOffsets(t, brokers, group, topic) {
		total += o
	}
	return total
}

// committedOffsets are group's committed offsets on topic by partition.
func committedOffsets(t *testing.T, brokers []string, group, topic string) map[int32]int64 {
	t.Helper()
	adm := newAdmin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			out[o.Partition] = o.At
		}
	})
	return out
}

package test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// kfakeEnv is NewEnv with the in-process kfake whatever KAFKA_BROKERS
// says: these tests inject faults into the broker.
func kfakeEnv(t *testing.T, opts ...kfake.Opt) *harness.Env {
	t.Setenv(devenv.BrokersEnv, "")
	e := harness.NewEnv(t, harness.EnvOpts{KFake: opts})
	if e.Kafka.Cluster == nil {
		t.Fatal("no in-process kfake cluster")
	}
	return e
}

// TestFaultKafkaUnavailable makes the broker fail the router's requests
// for a while (produce answered NOT_LEADER_FOR_PARTITION, produce applied
// but answered REQUEST_TIMED_OUT, the transaction coordinator
// unavailable) while an application writes. The router must keep running,
// retry, keep its memory bounded, and deliver every row exactly once.
func TestFaultKafkaUnavailable(t *testing.T) {
	rng := harness.FaultRand(t)
	e := kfakeEnv(t)
	r := harness.StartRouter(t, e.Args("kafkadown")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 40, 200), 500)
	col.WaitProgress(t, r, 200, time.Minute, "routing before the faults")
	rss := harness.SampleRSS(r.PID())

	outage := harness.ByMode(5*time.Second, 20*time.Second)
	phases := []struct {
		name  string
		fault kfake.Fault
	}{
		{"produce NOT_LEADER_FOR_PARTITION", kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Err: kerr.NotLeaderForPartition, Count: -1}},
		{"produce REQUEST_TIMED_OUT after append", kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Err: kerr.RequestTimedOut, Count: -1}},
		{"transaction coordinator not available", kfake.Fault{
			Keys: []kmsg.Key{kmsg.AddPartitionsToTxn, kmsg.EndTxn, kmsg.FindCoordinator},
			Err:  kerr.CoordinatorNotAvailable, Count: -1}},
	}
	rng.Shuffle(len(phases), func(i, j int) { phases[i], phases[j] = phases[j], phases[i] })
	for _, p := range phases {
		h := e.Kafka.Cluster.Fault(p.fault)
		time.Sleep(harness.RandDur(rng, outage*4/5, outage*6/5)) // the outage itself
		h.Remove()
		r.MustRun(p.name)
		t.Logf("%s: %d requests failed", p.name, h.Hits())
		if h.Hits() == 0 {
			t.Errorf("%s: the fault never hit a request", p.name)
		}
		col.WaitProgress(t, r, 200, time.Minute, "routing after "+p.name)
	}
	peak := rss.Stop()

	v := harness.FinishRun(t, e.DB, l, col, r, 2*time.Minute)
	t.Logf("%d outages of about %s, router peak RSS %.0f MiB, %s", len(phases), outage, peak, v)
	if peak > harness.RSSLimitMB() {
		t.Errorf("router RSS reached %.0f MiB during the outages, limit %.0f MiB", peak, harness.RSSLimitMB())
	}
}

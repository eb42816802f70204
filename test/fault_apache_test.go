package test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// The Apache Kafka counterparts of TestFaultKafkaUnavailable and
// TestFaultKafkaBrokerRestart: instead of kfake's injected error codes,
// the router's private node is paused (SIGSTOP), killed (SIGKILL) or
// stopped (SIGTERM) and started again, and the router's connections are
// cut by a proxy at chosen requests. The router must keep running and
// deliver every row exactly once.

// apacheOutage is one fault: it begins when the router's next request of
// key passes the proxy (or at a random moment when key is -1), where
// begin runs and says what becomes of the request; end, if set, runs
// after the outage.
type apacheOutage struct {
	name  string
	key   kmsg.Key
	begin func() harness.ProxyAction
	end   func()
}

// TestFaultApacheKafkaUnavailable: responses lost after the broker applied
// the request (a produce, a commit), and the broker paused for a few
// seconds while it holds a produce request or the commit.
func TestFaultApacheKafkaUnavailable(t *testing.T) {
	rng := harness.FaultRand(t)
	k, proxies := harness.PrivateApacheProxied(t, devenv.ApacheKafkaConfig{})
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	e.UseProxies(proxies)
	a := k.Apache
	pause := func() harness.ProxyAction {
		if err := a.PauseNode(0); err != nil {
			t.Errorf("pausing the node: %v", err)
		}
		return harness.Forward
	}
	resume := func() {
		time.Sleep(harness.RandDur(rng, 3*time.Second, 6*time.Second)) // the outage itself
		if err := a.ResumeNode(0); err != nil {
			t.Errorf("continuing the node: %v", err)
		}
	}
	outages := []apacheOutage{
		{"produce response lost (the broker appended the batch)", kmsg.Produce, func() harness.ProxyAction { return harness.ForwardDrop }, nil},
		{"commit response lost (the broker committed)", kmsg.EndTxn, func() harness.ProxyAction { return harness.ForwardDrop }, nil},
		{"broker paused at a produce request", kmsg.Produce, pause, resume},
		{"broker paused at the commit", kmsg.EndTxn, pause, resume},
	}
	apacheOutages(t, rng, e, "unavailable", outages)
}

// TestFaultApacheBrokerRestart: the single node killed at the router's
// produce request, killed at its commit (the EndTxn request dies with the
// broker: the commit's outcome is unknown to the router), and stopped
// gracefully at a random moment, each time started again from its data
// directory after a few seconds. A single node is killed only when no
// transaction of the router waits for its commit markers (see DESIGN.md,
// the hanging transaction): at a produce request once the previous
// commit is complete, and at an EndTxn that never reaches it.
func TestFaultApacheBrokerRestart(t *testing.T) {
	rng := harness.FaultRand(t)
	k, proxies := harness.PrivateApacheProxied(t, devenv.ApacheKafkaConfig{})
	e := harness.NewEnv(t, harness.EnvOpts{Kafka: func(testing.TB) *devenv.Kafka { return k }})
	e.UseProxies(proxies)
	a := k.Apache
	const name = "restart"
	txnIDs := harness.RouterTxnIDs(name)
	start := func() {
		time.Sleep(harness.RandDur(rng, 2*time.Second, 5*time.Second)) // the outage itself
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := a.StartNode(ctx, 0); err != nil {
			t.Fatalf("starting the node again: %v", err)
		}
	}
	outages := []apacheOutage{
		{"killed at a produce request", kmsg.Produce, func() harness.ProxyAction {
			waitTxnSettled(t, e.Kafka.Brokers, txnIDs...)
			a.KillNode(0)
			return harness.Drop
		}, start},
		{"killed at the commit", kmsg.EndTxn, func() harness.ProxyAction {
			a.KillNode(0)
			return harness.Drop
		}, start},
		{"stopped at a random moment", -1, func() harness.ProxyAction {
			waitTxnSettled(t, e.Kafka.Brokers, txnIDs...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := a.StopNode(ctx, 0); err != nil {
				t.Errorf("stopping the node: %v", err)
			}
			return harness.Forward
		}, start},
	}
	apacheOutages(t, rng, e, name, outages)
}

// apacheOutages runs the router of name under load through the outages,
// in random order, and checks the delivery.
func apacheOutages(t *testing.T, rng *rand.Rand, e *harness.Env, name string, outages []apacheOutage) {
	t.Helper()
	r := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 40, 100), 500)
	col.WaitProgress(t, r, 200, time.Minute, "routing before the faults")
	rss := harness.SampleRSS(r.PID())
	rng.Shuffle(len(outages), func(i, j int) { outages[i], outages[j] = outages[j], outages[i] })
	for _, o := range outages {
		began := time.Now()
		if o.key >= 0 {
			tr := e.Proxy.At(o.key, o.begin)
			if !e.Proxy.Wait(tr, time.Minute) {
				t.Fatalf("%s: the router sent no %s request within a minute", o.name, o.key.Name())
			}
		} else {
			time.Sleep(harness.RandDur(rng, 200*time.Millisecond, time.Second))
			o.begin()
		}
		if o.end != nil {
			o.end()
		}
		r.MustRun(o.name)
		col.WaitProgress(t, r, 200, 2*time.Minute, "routing after "+o.name)
		harness.NoteRecovery(t, time.Since(began))
		t.Logf("%s: survived, routing again %s after it began", o.name, time.Since(began).Round(time.Millisecond))
	}
	peak := rss.Stop()
	v := harness.FinishRun(t, e.DB, l, col, r, 2*time.Minute)
	t.Logf("broker %s, %d outages, kafka errors that started a new session %d (lost commit answers: %d committed, %d aborted; "+
		"sessions that waited for the checkpoint partition to settle %d, that found it unsettled %d, that read a checkpoint behind an acknowledged one %d), router peak RSS %.0f MiB, %s",
		e.BrokerName(), len(outages), r.LogCount("kafka error; resuming from the committed checkpoint"),
		r.LogCount("the commit whose answer was lost was committed"), r.LogCount("the commit whose answer was lost was aborted"),
		r.LogCount("the checkpoint partition had a transaction open"), r.LogCount("neither committed nor aborted"),
		r.LogCount("the checkpoint read is behind one Kafka acknowledged"), peak, v)
	if peak > harness.RSSLimitMB() {
		t.Errorf("router RSS reached %.0f MiB during the outages, limit %.0f MiB", peak, harness.RSSLimitMB())
	}
}

// waitTxnSettled waits until the transactional id has no commit or abort
// whose markers are still being written (state PrepareCommit or
// PrepareAbort): a single node killed then could leave the transaction
// hanging. It runs in the proxy's goroutine, so it reports and does not
// stop the test.
func waitTxnSettled(t testing.TB, brokers []string, ids ...string) {
	var state string
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if state, err = harness.DescribeTxnState(brokers, ids...); err == nil && state != "PrepareCommit" && state != "PrepareAbort" {
			return
		}
	}
	t.Errorf("transaction of %s still %q (%v) after 30s: killing the node anyway", strings.Join(ids, ", "), state, err)
}

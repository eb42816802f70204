package test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/relay"
)

// kfakeEnv is newEnv with the in-process kfake whatever KAFKA_BROKERS
// says: these tests inject faults into the broker.
func kfakeEnv(t *testing.T, opts ...kfake.Opt) *env {
	t.Setenv(devenv.BrokersEnv, "")
	e := newEnv(t, envOpts{kfake: opts})
	if e.kafka.Cluster == nil {
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
	rng := faultRand(t)
	e := kfakeEnv(t)
	r := startRouter(t, e.args("kafkadown")...)
	col := newCollector(t, e.kafka.Brokers, e.topicRegex())
	l := startLoad(t, newWriter(e.db, rng, "agg", 40, 200), 500)
	col.waitProgress(t, r, 200, time.Minute, "routing before the faults")
	rss := sampleRSS(r.pid())

	outage := byMode(5*time.Second, 20*time.Second)
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
		h := e.kafka.Cluster.Fault(p.fault)
		time.Sleep(randDur(rng, outage*4/5, outage*6/5)) // the outage itself
		h.Remove()
		r.mustRun(p.name)
		t.Logf("%s: %d requests failed", p.name, h.Hits())
		if h.Hits() == 0 {
			t.Errorf("%s: the fault never hit a request", p.name)
		}
		col.waitProgress(t, r, 200, time.Minute, "routing after "+p.name)
	}
	peak := rss.stop()

	l.stop()
	t.Logf("load: %s", l)
	want := committedRows(t, e.db)
	col.waitAll(t, want, 2*time.Minute)
	r.mustRun("end")
	if code := r.stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	v := checkDelivery(t, want, col.settle(t, time.Second), nil)
	t.Logf("%d outages of about %s, router peak RSS %.0f MiB, %s", len(phases), outage, peak, v)
	if peak > rssLimitMB() {
		t.Errorf("router RSS reached %.0f MiB during the outages, limit %.0f MiB", peak, rssLimitMB())
	}
}

// TestFaultKafkaBrokerRestart stops the whole (single-broker) cluster for
// a few seconds and starts it again on the same port from its data
// directory, while an application writes: once while the router produces
// into an open Kafka transaction, once as it commits one (the EndTxn
// request dies with the broker: the commit's outcome is unknown to the
// router), and at random moments in the long variant. The router must keep running and deliver every row
// exactly once.
func TestFaultKafkaBrokerRestart(t *testing.T) {
	rng := faultRand(t)
	port := freeTCPPort(t)
	opts := []kfake.Opt{kfake.DataDir(t.TempDir()), kfake.Ports(port)}
	e := kfakeEnv(t, opts...)
	const name = "brokerdown"
	r := startRouter(t, e.args(name)...)
	col := newCollector(t, e.kafka.Brokers, e.topicRegex())
	l := startLoad(t, newWriter(e.db, rng, "agg", 40, 0), 500)
	col.waitProgress(t, r, 200, time.Minute, "routing before the broker stops")

	moments := []kmsg.Key{kmsg.Produce, kmsg.EndTxn}
	for range byMode(0, 3) {
		moments = append(moments, -1)
	}
	for i, at := range moments {
		what := fmt.Sprintf("broker stop %d at a random moment", i+1)
		if at >= 0 {
			what = fmt.Sprintf("broker stop %d at the router's %s request", i+1, at.Name())
			dieAt(t, e.kafka.Cluster, at, relay.TransactionalID(name))
		} else {
			time.Sleep(randDur(rng, 200*time.Millisecond, time.Second))
		}
		e.kafka.Close()
		down := randDur(rng, 2*time.Second, 5*time.Second)
		time.Sleep(down) // the outage itself
		k, err := devenv.StartKfake(opts...)
		if err != nil {
			t.Fatalf("starting the broker again: %v", err)
		}
		e.kafka = k
		t.Cleanup(k.Close)
		what += fmt.Sprintf(", down %s", down.Round(time.Millisecond))
		r.mustRun(what)
		col.waitProgress(t, r, 200, time.Minute, "routing after "+what)
		r.mustRun(what)
		t.Logf("%s: survived", what)
	}

	l.stop()
	t.Logf("load: %s", l)
	want := committedRows(t, e.db)
	col.waitAll(t, want, 2*time.Minute)
	r.mustRun("end")
	if code := r.stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	v := checkDelivery(t, want, col.settle(t, time.Second), nil)
	t.Logf("broker stops %d, %s", len(moments), v)
}

// dieAt waits until the transactional producer txnID sends a request of
// type key and drops it unanswered (closing the connection), as a broker
// dying at that moment would.
func dieAt(t *testing.T, c *kfake.Cluster, key kmsg.Key, txnID string) {
	t.Helper()
	hit := make(chan struct{})
	var once sync.Once
	c.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
		var id string
		switch r := req.(type) {
		case *kmsg.EndTxnRequest:
			id = r.TransactionalID
		case *kmsg.ProduceRequest:
			if r.TransactionID != nil {
				id = *r.TransactionID
			}
		}
		if id != txnID {
			return nil, nil, false
		}
		once.Do(func() { close(hit) })
		c.KeepControl()
		return nil, errors.New("broker stopping"), true
	})
	select {
	case <-hit:
	case <-time.After(time.Minute):
		t.Fatalf("the router sent no %s request within a minute", key.Name())
	}
}

func freeTCPPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestFaultSlowKafka makes every produce request wait 2-3 s at the broker
// for a while (at least 15 s, 60 s in the long variant, and until the
// router lost its binlog connection) while an application keeps writing,
// with a large non-outbox row in each transaction (binlog volume that
// fills the socket buffers). The server's net_write_timeout is 5 s, so a
// router that stops reading the binlog loses its dump connection. The router must
// keep running, reconnect, keep its memory bounded, and deliver every row
// exactly once.
func TestFaultSlowKafka(t *testing.T) {
	rng := faultRand(t)
	e := kfakeEnv(t)
	e.exec("SET GLOBAL net_write_timeout = 5") // sessions opened from now on
	t.Cleanup(func() { _, _ = e.db.Exec("SET GLOBAL net_write_timeout = DEFAULT") })
	r := startRouter(t, e.args("slowkafka")...)
	col := newCollector(t, e.kafka.Brokers, e.topicRegex())
	e.exec("CREATE TABLE ballast (id BIGINT AUTO_INCREMENT PRIMARY KEY, data LONGBLOB)")
	w := newWriter(e.db, rng, "agg", 40, 200)
	w.ballast = make([]byte, 32<<10)
	l := startLoad(t, w, 500)
	col.waitProgress(t, r, 200, time.Minute, "routing before Kafka slows down")

	var slow atomic.Bool
	var slept atomic.Int64
	slow.Store(true)
	c := e.kafka.Cluster
	crng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	var crngMu sync.Mutex // sleeping controls may run concurrently
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if slow.Load() {
			crngMu.Lock()
			d := randDur(crng, 2*time.Second, 3*time.Second)
			crngMu.Unlock()
			c.SleepControl(func() { time.Sleep(d) })
			slept.Add(1)
		}
		return nil, nil, false
	})
	rss := sampleRSS(r.pid())
	lostBefore := r.logCount("binlog connection lost")
	time.Sleep(byMode(15*time.Second, 60*time.Second)) // the slow period itself
	if err := poll(time.Minute, func() bool { return r.logCount("binlog connection lost") > lostBefore || !r.running() }); err != nil {
		t.Errorf("the server never dropped the stalled binlog connection (net_write_timeout): the test proved nothing")
	}
	slow.Store(false)
	r.mustRun("slow Kafka")
	col.waitProgress(t, r, 200, 2*time.Minute, "routing after Kafka is fast again")
	peak := rss.stop()
	drops := r.logCount("binlog connection lost") - lostBefore

	l.stop()
	t.Logf("load: %s", l)
	want := committedRows(t, e.db)
	col.waitAll(t, want, 3*time.Minute)
	r.mustRun("end")
	if code := r.stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	v := checkDelivery(t, want, col.settle(t, time.Second), nil)
	t.Logf("%d produce requests delayed 2-3 s, binlog connection lost %d times meanwhile, router peak RSS %.0f MiB, %s",
		slept.Load(), drops, peak, v)
	if slept.Load() == 0 {
		t.Errorf("no produce request was delayed")
	}
	if peak > rssLimitMB() {
		t.Errorf("router RSS reached %.0f MiB while Kafka was slow, limit %.0f MiB", peak, rssLimitMB())
	}
}

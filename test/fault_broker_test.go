package test

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestFaultKafkaBrokerRestart stops the whole (single-broker) cluster for
// a few seconds and starts it again on the same port from its data
// directory, while an application writes: once while the router produces
// into an open Kafka transaction, once as it commits one (the EndTxn
// request dies with the broker: the commit's outcome is unknown to the
// router), and at random moments in the long variant. The router must
// keep running and deliver every row exactly once.
func TestFaultKafkaBrokerRestart(t *testing.T) {
	rng := harness.FaultRand(t)
	port := freeTCPPort(t)
	opts := []kfake.Opt{kfake.DataDir(t.TempDir()), kfake.Ports(port)}
	e := kfakeEnv(t, opts...)
	const name = "brokerdown"
	r := harness.StartRouter(t, e.Args(name)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 40, 0), 500)
	col.WaitProgress(t, r, 200, time.Minute, "routing before the broker stops")

	moments := []kmsg.Key{kmsg.Produce, kmsg.EndTxn}
	for range harness.ByMode(0, 3) {
		moments = append(moments, -1)
	}
	for i, at := range moments {
		what := fmt.Sprintf("broker stop %d at a random moment", i+1)
		if at >= 0 {
			what = fmt.Sprintf("broker stop %d at the router's %s request", i+1, at.Name())
			dieAt(t, e.Kafka.Cluster, at, harness.RouterTxnIDs(name)...)
		} else {
			time.Sleep(harness.RandDur(rng, 200*time.Millisecond, time.Second))
		}
		e.Kafka.Close()
		down := harness.RandDur(rng, 2*time.Second, 5*time.Second)
		time.Sleep(down) // the outage itself
		k, err := devenv.StartKfake(opts...)
		if err != nil {
			t.Fatalf("starting the broker again: %v", err)
		}
		e.Kafka = k
		t.Cleanup(k.Close)
		what += fmt.Sprintf(", down %s", down.Round(time.Millisecond))
		r.MustRun(what)
		col.WaitProgress(t, r, 200, time.Minute, "routing after "+what)
		r.MustRun(what)
		t.Logf("%s: survived", what)
	}

	v := harness.FinishRun(t, e.DB, l, col, r, 2*time.Minute)
	t.Logf("broker stops %d, %s", len(moments), v)
}

// dieAt waits until a transactional producer of TxnIDs sends a request of
// type key and drops it unanswered (closing the connection), as a broker
// dying at that moment would.
func dieAt(t *testing.T, c *kfake.Cluster, key kmsg.Key, txnIDs ...string) {
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
		if !slices.Contains(txnIDs, id) {
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

package test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestFaultSlowKafka makes every produce request wait 2-3 s at the broker
// for a while (at least 15 s, 60 s in the long variant, and until the
// router lost its binlog connection) while an application keeps writing,
// with a large non-outbox row in each transaction (binlog volume that
// fills the socket buffers). The server's net_write_timeout is 5 s, so a
// router that stops reading the binlog loses its dump connection. The
// router must keep running, reconnect, keep its memory bounded, and
// deliver every row exactly once.
func TestFaultSlowKafka(t *testing.T) {
	rng := harness.FaultRand(t)
	e := kfakeEnv(t)
	e.Exec("SET GLOBAL net_write_timeout = 5") // sessions opened from now on
	t.Cleanup(func() { _, _ = e.DB.Exec("SET GLOBAL net_write_timeout = DEFAULT") })
	r := harness.StartRouter(t, e.Args("slowkafka")...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	e.Exec("CREATE TABLE ballast (id BIGINT AUTO_INCREMENT PRIMARY KEY, data LONGBLOB)")
	w := harness.NewWriter(e.DB, rng, "agg", 40, 200)
	w.Ballast = make([]byte, 32<<10)
	l := harness.StartLoad(t, w, 500)
	col.WaitProgress(t, r, 200, time.Minute, "routing before Kafka slows down")

	var slow atomic.Bool
	var slept atomic.Int64
	slow.Store(true)
	c := e.Kafka.Cluster
	crng := rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	var crngMu sync.Mutex // sleeping controls may run concurrently
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if slow.Load() {
			crngMu.Lock()
			d := harness.RandDur(crng, 2*time.Second, 3*time.Second)
			crngMu.Unlock()
			c.SleepControl(func() { time.Sleep(d) })
			slept.Add(1)
		}
		return nil, nil, false
	})
	rss := harness.SampleRSS(r.PID())
	lostBefore := r.LogCount("binlog connection lost")
	time.Sleep(harness.ByMode(15*time.Second, 60*time.Second)) // the slow period itself
	if err := harness.Poll(time.Minute, func() bool { return r.LogCount("binlog connection lost") > lostBefore || !r.Running() }); err != nil {
		t.Errorf("the server never dropped the stalled binlog connection (net_write_timeout): the test proved nothing")
	}
	slow.Store(false)
	r.MustRun("slow Kafka")
	col.WaitProgress(t, r, 200, 2*time.Minute, "routing after Kafka is fast again")
	peak := rss.Stop()
	drops := r.LogCount("binlog connection lost") - lostBefore

	v := harness.FinishRun(t, e.DB, l, col, r, 3*time.Minute)
	t.Logf("%d produce requests delayed 2-3 s, binlog connection lost %d times meanwhile, router peak RSS %.0f MiB, %s",
		slept.Load(), drops, peak, v)
	if slept.Load() == 0 {
		t.Errorf("no produce request was delayed")
	}
	if peak > harness.RSSLimitMB() {
		t.Errorf("router RSS reached %.0f MiB while Kafka was slow, limit %.0f MiB", peak, harness.RSSLimitMB())
	}
}

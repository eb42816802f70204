package test

import (
	"fmt"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/test/harness"
)

// TestCrashSIGKILL kills the router binary with SIGKILL at random moments
// while an application keeps committing small outbox transactions, and
// restarts it each time. Exactly-once: a read_committed consumer reads
// every committed row once, in per-aggregate order. At-least-once: nothing
// is lost, and only rows the router had handed to Kafka after the last
// checkpoint before a kill may come twice.
func TestCrashSIGKILL(t *testing.T) {
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		t.Run(delivery, func(t *testing.T) { crashTest(t, harness.NewEnv(t, harness.EnvOpts{}), delivery) })
	}
}

// crashKills kills the router for the crash loop and tells what the kill
// hit: TxnWatch on kfake, ApacheKills on Apache Kafka.
type crashKills interface {
	// Kill kills the router now and reports whether its Kafka
	// transaction was open.
	Kill(kill func()) (open bool)
	// KillAtProduce kills it when its next produce request arrives, before
	// the broker appends it, or after timeout if none comes; it reports
	// whether a transaction was open and whether a request came.
	KillAtProduce(kill func(), timeout time.Duration) (open, hit bool)
}

// crashWindow is what a kill may cause to be repeated at least once: rows
// of the transactions after the checkpoint stored at the kill, up to the
// last one the server had committed.
type crashWindow struct{ after, upTo uint64 } // GTID sequence numbers, domain 0

func crashTest(t *testing.T, e *harness.Env, delivery string) {
	rng := harness.FaultRand(t)
	kills, minEvents := harness.ByMode(5, 20), harness.ByMode(3000, 50000)
	rate := harness.ByMode(700, 1000)
	const name = "crash"
	txnIDs := harness.RouterTxnIDs(name)
	if delivery == "at-least-once" {
		txnIDs = nil // the idempotent producer
	}
	var watch crashKills
	if e.Kafka.Cluster != nil {
		watch = harness.WatchTxns(e.Kafka.Cluster, txnIDs...)
	} else if p := harness.ProxiedRouter(t, e); p != nil {
		watch = &harness.ApacheKills{T: t, Proxy: p, Brokers: e.Kafka.Brokers, TxnIDs: txnIDs}
	}
	t.Logf("broker %s", e.BrokerName())
	r := harness.StartRouter(t, e.Args(name, "--delivery", delivery)...)
	col := harness.NewCollector(t, e.Kafka.Brokers, e.TopicRegex())
	l := harness.StartLoad(t, harness.NewWriter(e.DB, rng, "agg", 40, 0), rate)

	var windows []crashWindow
	killed, openAtKill, atProduce := 0, 0, 0
	for killed < kills || l.Rows.Load() < int64(minEvents) {
		// Kill at a random moment shortly after the router is up again:
		// it is then catching up the rows written while it was down.
		harness.Eventually(t, 60*time.Second, "router start", func() bool {
			return r.LogCount("resuming from checkpoint")+r.LogCount("no checkpoint stored") > killed || !r.Running()
		})
		time.Sleep(harness.RandDur(rng, 100*time.Millisecond, 700*time.Millisecond))
		r.MustRun(fmt.Sprintf("before kill %d", killed+1))
		var open, hit bool
		switch {
		case watch != nil && killed%2 == 1:
			// Every other kill waits for the router's next produce request
			// and lands before the broker appends it.
			open, hit = watch.KillAtProduce(r.Kill, 2*time.Second)
		case watch != nil:
			open = watch.Kill(r.Kill)
		default:
			r.Kill()
		}
		killed++
		if open && delivery == "exactly-once" {
			openAtKill++
		}
		if hit {
			atProduce++
		}
		windows = append(windows, crashWindowAfterKill(t, e, name))
		r.Restart()
	}
	l.Stop()
	t.Logf("load: %s", l)

	want := harness.CommittedRows(t, e.DB)
	col.WaitAll(t, want, 3*time.Minute)
	if code := r.Stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	got := col.Settle(t, time.Second)
	if n := crossCheckReaders(t, e); harness.OnApache() && n != len(got) {
		t.Errorf("the reference readers read %d records, the collector %d", n, len(got))
	}

	var dupOK func(harness.Delivered) bool
	bound := 0
	if delivery == "at-least-once" {
		dupOK = func(d harness.Delivered) bool { return inWindows(windows, d.GTID) }
		bound = rowsInWindows(windows, got)
	}
	v := harness.CheckDelivery(t, want, got, dupOK)
	behind := 0
	for _, w := range windows {
		if w.upTo > w.after {
			behind++
		}
	}
	t.Logf("kills survived %d (at a produce request %d, Kafka transaction open %d, rows past the checkpoint %d), %s, duplicate bound %d",
		killed, atProduce, openAtKill, behind, v, bound)
	if behind == 0 {
		t.Errorf("every kill found the checkpoint at the server's last transaction: the test proved nothing")
	}
	if v.Duplicated > bound {
		t.Errorf("%d duplicates, more than the %d rows written in the crash windows", v.Duplicated, bound)
	}
	if watch != nil && openAtKill == 0 && delivery == "exactly-once" {
		t.Errorf("no kill landed while a Kafka transaction was open: the test proved nothing")
	}
	if watch != nil && atProduce == 0 {
		t.Errorf("no kill landed at a produce request")
	}
}

// crashWindowAfterKill reads, with the router dead, the stored checkpoint
// and the server's last GTID.
func crashWindowAfterKill(t *testing.T, e *harness.Env, name string) crashWindow {
	t.Helper()
	upTo := harness.GTIDSeqs(t, e.GTIDPos())[0]
	return crashWindow{after: harness.GTIDSeqs(t, e.CheckpointSet(name))[0], upTo: upTo}
}

func inWindows(ws []crashWindow, gtid string) bool {
	_, seq, ok := harness.ParseGTID(gtid)
	if !ok {
		return false
	}
	for _, w := range ws {
		if seq > w.after && seq <= w.upTo {
			return true
		}
	}
	return false
}

// rowsInWindows counts, per kill, the distinct rows whose transaction lies
// in its window: the most that kill can cause to be repeated.
func rowsInWindows(ws []crashWindow, got []harness.Delivered) int {
	gtidOf := map[string]uint64{}
	for _, d := range got {
		if _, seq, ok := harness.ParseGTID(d.GTID); ok {
			gtidOf[d.ID] = seq
		}
	}
	n := 0
	for _, w := range ws {
		for _, seq := range gtidOf {
			if seq > w.after && seq <= w.upTo {
				n++
			}
		}
	}
	return n
}

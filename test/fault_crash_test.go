package test

import (
	"fmt"
	"testing"
	"time"
)

// TestCrashSIGKILL kills the router binary with SIGKILL at random moments
// while an application keeps committing small outbox transactions, and
// restarts it each time. Exactly-once: a read_committed consumer reads
// every committed row once, in per-aggregate order. At-least-once: nothing
// is lost, and only rows the router had handed to Kafka after the last
// checkpoint before a kill may come twice.
func TestCrashSIGKILL(t *testing.T) {
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		t.Run(delivery, func(t *testing.T) { crashTest(t, newEnv(t, envOpts{}), delivery) })
	}
}

// crashKills kills the router for the crash loop and tells what the kill
// hit: txnWatch on kfake, apacheKills on Apache Kafka.
type crashKills interface {
	// kill kills the router now and reports whether its Kafka
	// transaction was open.
	kill(kill func()) (open bool)
	// killAtProduce kills it when its next produce request arrives, before
	// the broker appends it, or after timeout if none comes; it reports
	// whether a transaction was open and whether a request came.
	killAtProduce(kill func(), timeout time.Duration) (open, hit bool)
}

// crashWindow is what a kill may cause to be repeated at least once: rows
// of the transactions after the checkpoint stored at the kill, up to the
// last one the server had committed.
type crashWindow struct{ after, upTo uint64 } // GTID sequence numbers, domain 0

func crashTest(t *testing.T, e *env, delivery string) {
	rng := faultRand(t)
	kills, minEvents := byMode(5, 20), byMode(3000, 50000)
	rate := byMode(700, 1000)
	const name = "crash"
	txnIDs := routerTxnIDs(name)
	if delivery == "at-least-once" {
		txnIDs = nil // the idempotent producer
	}
	var watch crashKills
	if e.kafka.Cluster != nil {
		watch = watchTxns(e.kafka.Cluster, txnIDs...)
	} else if p := proxiedRouter(t, e); p != nil {
		watch = &apacheKills{t: t, proxy: p, brokers: e.kafka.Brokers, txnIDs: txnIDs}
	}
	t.Logf("broker %s", e.brokerName())
	r := startRouter(t, e.args(name, "--delivery", delivery)...)
	col := newCollector(t, e.kafka.Brokers, e.topicRegex())
	l := startLoad(t, newWriter(e.db, rng, "agg", 40, 0), rate)

	var windows []crashWindow
	killed, openAtKill, atProduce := 0, 0, 0
	for killed < kills || l.rows.Load() < int64(minEvents) {
		// Kill at a random moment shortly after the router is up again:
		// it is then catching up the rows written while it was down.
		eventually(t, 60*time.Second, "router start", func() bool {
			return r.logCount("resuming from checkpoint")+r.logCount("no checkpoint stored") > killed || !r.running()
		})
		time.Sleep(randDur(rng, 100*time.Millisecond, 700*time.Millisecond))
		r.mustRun(fmt.Sprintf("before kill %d", killed+1))
		var open, hit bool
		switch {
		case watch != nil && killed%2 == 1:
			// Every other kill waits for the router's next produce request
			// and lands before the broker appends it.
			open, hit = watch.killAtProduce(r.kill, 2*time.Second)
		case watch != nil:
			open = watch.kill(r.kill)
		default:
			r.kill()
		}
		killed++
		if open && delivery == "exactly-once" {
			openAtKill++
		}
		if hit {
			atProduce++
		}
		windows = append(windows, crashWindowAfterKill(t, e, name))
		r.restart()
	}
	l.stop()
	t.Logf("load: %s", l)

	want := committedRows(t, e.db)
	col.waitAll(t, want, 3*time.Minute)
	if code := r.stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	got := col.settle(t, time.Second)
	if n := crossCheckReaders(t, e); onApache() && n != len(got) {
		t.Errorf("the reference readers read %d records, the collector %d", n, len(got))
	}

	var dupOK func(delivered) bool
	bound := 0
	if delivery == "at-least-once" {
		dupOK = func(d delivered) bool { return inWindows(windows, d.GTID) }
		bound = rowsInWindows(windows, got)
	}
	v := checkDelivery(t, want, got, dupOK)
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
func crashWindowAfterKill(t *testing.T, e *env, name string) crashWindow {
	t.Helper()
	upTo := gtidSeqs(t, e.gtidPos())[0]
	return crashWindow{after: gtidSeqs(t, e.checkpointSet(name))[0], upTo: upTo}
}

func inWindows(ws []crashWindow, gtid string) bool {
	_, seq, ok := parseGTID(gtid)
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
func rowsInWindows(ws []crashWindow, got []delivered) int {
	gtidOf := map[string]uint64{}
	for _, d := range got {
		if _, seq, ok := parseGTID(d.GTID); ok {
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

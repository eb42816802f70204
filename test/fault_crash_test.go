package test

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlog-router/binlog-router/internal/relay"
)

// TestCrashSIGKILL kills the router binary with SIGKILL at random moments
// while an application keeps committing small outbox transactions, and
// restarts it each time. Exactly-once: a read_committed consumer reads
// every committed row once, in per-aggregate order. At-least-once: nothing
// is lost, and only rows the router had handed to Kafka after the last
// checkpoint before a kill may come twice.
func TestCrashSIGKILL(t *testing.T) {
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		t.Run(delivery, func(t *testing.T) { crashTest(t, delivery) })
	}
}

// crashWindow is what a kill may cause to be repeated at least once: rows
// of the transactions after the checkpoint stored at the kill, up to the
// last one the server had committed.
type crashWindow struct{ after, upTo uint64 } // GTID sequence numbers, domain 0

func crashTest(t *testing.T, delivery string) {
	rng := faultRand(t)
	kills, minEvents := byMode(5, 20), byMode(3000, 50000)
	rate := byMode(700, 1000)
	e := newEnv(t, envOpts{})
	const name = "crash"
	var watch *txnWatch
	if e.kafka.Cluster != nil {
		watch = watchTxns(e.kafka.Cluster, relay.TransactionalID(name))
	}
	r := startRouter(t, e.args(name, "--delivery", delivery)...)
	col := newCollector(t, e.kafka.Brokers, e.topicRegex())
	l := startLoad(t, newWriter(e.db, rng, "agg", 40, 0), rate)

	var windows []crashWindow
	killed, openAtKill := 0, 0
	for killed < kills || l.rows.Load() < int64(minEvents) {
		// Kill at a random moment shortly after the router is up again:
		// it is then catching up the rows written while it was down.
		eventually(t, 60*time.Second, "router start", func() bool {
			return r.logCount("resuming from checkpoint")+r.logCount("no checkpoint stored") > killed || !r.running()
		})
		time.Sleep(randDur(rng, 100*time.Millisecond, 700*time.Millisecond))
		r.mustRun(fmt.Sprintf("before kill %d", killed+1))
		open := watch != nil && watch.open.Load()
		r.kill()
		killed++
		if open {
			openAtKill++
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

	var dupOK func(delivered) bool
	bound := 0
	if delivery == "at-least-once" {
		dupOK = func(d delivered) bool { return inWindows(t, windows, d.GTID) }
		bound = rowsInWindows(t, windows, got)
	}
	v := checkDelivery(t, want, got, dupOK)
	behind := 0
	for _, w := range windows {
		if w.upTo > w.after {
			behind++
		}
	}
	t.Logf("kills survived %d (Kafka transaction open at %d, rows past the checkpoint at %d of them), %s, duplicate bound %d",
		killed, openAtKill, behind, v, bound)
	if behind == 0 {
		t.Errorf("every kill found the checkpoint at the server's last transaction: the test proved nothing")
	}
	if v.Duplicated > bound {
		t.Errorf("%d duplicates, more than the %d rows written in the crash windows", v.Duplicated, bound)
	}
	if watch != nil && openAtKill == 0 && delivery == "exactly-once" {
		t.Errorf("no kill landed while a Kafka transaction was open: the test proved nothing")
	}
}

// crashWindowAfterKill reads, with the router dead, the stored checkpoint
// and the server's last GTID.
func crashWindowAfterKill(t *testing.T, e *env, name string) crashWindow {
	t.Helper()
	upTo := gtidSeqs(t, gtidPos(t, e.db))[0]
	return crashWindow{after: gtidSeqs(t, loadCheckpoint(t, e, name))[0], upTo: upTo}
}

func inWindows(t testing.TB, ws []crashWindow, gtid string) bool {
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
func rowsInWindows(t testing.TB, ws []crashWindow, got []delivered) int {
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

// txnWatch follows, on the in-process kfake, whether a transactional
// producer has a Kafka transaction open: a transactional produce or
// AddPartitionsToTxn opens one, EndTxn or a new InitProducerID ends it.
type txnWatch struct {
	open    atomic.Bool
	records atomic.Int64             // records produced, except to the skipped topic
	skip    atomic.Pointer[[16]byte] // a topic id (produce v13+ names topics by id)
}

func watchTxns(c *kfake.Cluster, txnID string) *txnWatch {
	w := &txnWatch{}
	observe := func(key kmsg.Key, id func(kmsg.Request) string, open bool) {
		c.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
			if id(req) == txnID {
				w.open.Store(open)
			}
			return nil, nil, false
		})
	}
	observe(kmsg.Produce, func(r kmsg.Request) string {
		p := r.(*kmsg.ProduceRequest)
		if p.TransactionID == nil || *p.TransactionID != txnID {
			return ""
		}
		skip := w.skip.Load()
		for _, tp := range p.Topics {
			if skip != nil && tp.TopicID == *skip {
				continue
			}
			for _, pp := range tp.Partitions {
				w.records.Add(int64(batchRecords(pp.Records)))
			}
		}
		return txnID
	}, true)
	observe(kmsg.AddPartitionsToTxn, func(r kmsg.Request) string {
		return r.(*kmsg.AddPartitionsToTxnRequest).TransactionalID
	}, true)
	observe(kmsg.EndTxn, func(r kmsg.Request) string { return r.(*kmsg.EndTxnRequest).TransactionalID }, false)
	observe(kmsg.InitProducerID, func(r kmsg.Request) string {
		if p := r.(*kmsg.InitProducerIDRequest); p.TransactionalID != nil {
			return *p.TransactionalID
		}
		return ""
	}, false)
	return w
}

// batchRecords counts the records in a produce request's record batches
// (NumRecords is at byte 57 of a v2 batch header).
func batchRecords(b []byte) int {
	n := 0
	for len(b) >= 61 {
		n += int(int32(binary.BigEndian.Uint32(b[57:61])))
		size := 12 + int(int32(binary.BigEndian.Uint32(b[8:12])))
		if size <= 12 || size > len(b) {
			break
		}
		b = b[size:]
	}
	return n
}

// skipTopic makes the watch ignore records produced to topic, which
// must exist.
func (w *txnWatch) skipTopic(t testing.TB, e *env, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kafkaOpts(e)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(t.Context(), topic)
	if err != nil || topics.Error() != nil {
		t.Fatalf("looking up topic %s: %v %v", topic, err, topics.Error())
	}
	id := [16]byte(topics[topic].ID)
	w.skip.Store(&id)
}

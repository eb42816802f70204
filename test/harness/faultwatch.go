package harness

import (
	"encoding/binary"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnWatch follows, on the in-process kfake, whether a transactional
// producer has a Kafka transaction open: a transactional produce or
// AddPartitionsToTxn opens one, EndTxn or a new InitProducerID ends it.
// The producer uses the TxnIDs in turn (RouterTxnIDs); with none it
// watches the produce requests of idempotent producers.
type TxnWatch struct {
	onProduce atomic.Pointer[func()] // run once at the next transactional produce
	open      atomic.Bool
	Records   atomic.Int64             // records produced, except to the skipped topic
	skip      atomic.Pointer[[16]byte] // a topic id (produce v13+ names topics by id)
}

// WatchTxns watches the transactions of txnIDs on kfake cluster c
// (the idempotent producer's when none are given).
func WatchTxns(c *kfake.Cluster, txnIDs ...string) *TxnWatch {
	w := &TxnWatch{}
	ours := func(id string) bool {
		if len(txnIDs) == 0 {
			return id == ""
		}
		return slices.Contains(txnIDs, id)
	}
	observe := func(key kmsg.Key, id func(kmsg.Request) string, open bool) {
		c.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
			if ours(id(req)) {
				w.open.Store(open)
			}
			return nil, nil, false
		})
	}
	observe(kmsg.Produce, func(r kmsg.Request) string {
		p := r.(*kmsg.ProduceRequest)
		var id string
		if p.TransactionID != nil {
			id = *p.TransactionID
		}
		if !ours(id) {
			return "-"
		}
		if f := w.onProduce.Swap(nil); f != nil {
			(*f)()
		}
		skip := w.skip.Load()
		for _, tp := range p.Topics {
			if skip != nil && tp.TopicID == *skip {
				continue
			}
			for _, pp := range tp.Partitions {
				w.Records.Add(int64(batchRecords(pp.Records)))
			}
		}
		return id
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

// Kill runs kill and reports whether a Kafka transaction was open.
func (w *TxnWatch) Kill(kill func()) bool {
	open := w.open.Load()
	kill()
	return open
}

// KillAtProduce runs kill when the producer's next produce request
// arrives (before the broker handles it: its records are appended for a
// dead producer), or after timeout if none comes. It reports whether a
// Kafka transaction was open at the kill and whether a request came.
func (w *TxnWatch) KillAtProduce(kill func(), timeout time.Duration) (open, hit bool) {
	done := make(chan struct{})
	f := func() { kill(); close(done) }
	w.onProduce.Store(&f)
	select {
	case <-done:
		return true, true
	case <-time.After(timeout):
	}
	if w.onProduce.CompareAndSwap(&f, nil) {
		open = w.open.Load()
		kill()
		return open, false
	}
	<-done
	return true, true
}

// SkipTopic makes the watch ignore records produced to topic, which
// must exist.
func (w *TxnWatch) SkipTopic(t testing.TB, e *Env, topic string) {
	t.Helper()
	topics, err := e.Admin().ListTopics(t.Context(), topic)
	if err != nil || topics.Error() != nil {
		t.Fatalf("looking up topic %s: %v %v", topic, err, topics.Error())
	}
	id := [16]byte(topics[topic].ID)
	w.skip.Store(&id)
}

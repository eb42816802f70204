package relay

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/binlog-router/binlog-router/internal/pipeline"
)

// txnMetrics records what KafkaTransaction was last told.
type txnMetrics struct {
	nopMetrics
	mu      sync.Mutex
	began   time.Time
	reports int
}

func (m *txnMetrics) KafkaTransaction(began time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.began = began
	m.reports++
}

func (m *txnMetrics) open() (time.Time, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.began, m.reports
}

// The open Kafka transaction is reported when it begins, once however
// many records it takes, stays reported while its commit is stuck (so its
// age grows), and is reported ended once committed or aborted.
func TestRelayReportsOpenTransaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &txnMetrics{}
		h := newHarness(t, func(c *Config) { c.Metrics = m })
		h.Src.Txn(1, 1, 2, 3)
		h.run()
		h.CommittedIDs(3)
		h.Settle()
		if began, n := m.open(); !began.IsZero() || n != 2 {
			t.Fatalf("after one committed transaction of 3 records: began %v after %d reports, want none open after 2 (begin, commit)", began, n)
		}

		h.Kafka.Mu.Lock()
		h.Kafka.StallFlush = true
		h.Kafka.Mu.Unlock()
		h.Src.Txn(2, 4, 5)
		h.Settle()
		began, _ := m.open()
		if began.IsZero() {
			t.Fatal("a transaction whose commit is stuck is not reported open")
		}
		time.Sleep(h.r.cfg.ShutdownTimeout / 4)
		if age := time.Since(began); age < h.r.cfg.ShutdownTimeout/4 {
			t.Fatalf("stuck transaction's age %s, want at least %s", age, h.r.cfg.ShutdownTimeout/4)
		}
		mustIs(t, h.Stop(), pipeline.ErrShutdownTimeout) // aborts it
		if began, _ := m.open(); !began.IsZero() {
			t.Fatalf("aborted transaction still reported open since %v", began)
		}
	})
}

// At-least-once opens no Kafka transaction: nothing is reported.
func TestRelayReportsNoTransactionAtLeastOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &txnMetrics{}
		h := newHarness(t, func(c *Config) { c.Metrics, c.Delivery = m, AtLeastOnce })
		h.Src.Txn(1, 1, 2)
		h.run()
		h.CommittedIDs(2)
		mustNoError(t, "stop", h.Stop())
		if _, n := m.open(); n != 0 {
			t.Fatalf("%d transaction reports at least once, want 0", n)
		}
	})
}

package metrics

import (
	"testing"
	"time"
)

// TestKafkaTransactionAge: the age of the open Kafka transaction grows
// while it stays open (a stuck commit), is 0 once it ends, and the
// timeout it is compared with is the configured one.
func TestKafkaTransactionAge(t *testing.T) {
	clk := newFakeClock()
	m := New(nil, Clock(clk.now), TransactionTimeout(4*time.Second))
	base := serve(t, m, nil)
	age := func() float64 {
		t.Helper()
		return value(t, scrape(t, base), "binlog_router_kafka_transaction_age_seconds")
	}

	if got := value(t, scrape(t, base), "binlog_router_kafka_transaction_timeout_seconds"); got != 4 {
		t.Fatalf("transaction_timeout_seconds = %v, want 4", got)
	}
	if got := age(); got != 0 {
		t.Fatalf("no transaction open: age = %v, want 0", got)
	}
	m.KafkaTransaction(clk.now())
	clk.advance(1500 * time.Millisecond)
	if got := age(); got != 1.5 {
		t.Fatalf("open 1.5s: age = %v, want 1.5", got)
	}
	clk.advance(5 * time.Second)
	if got := age(); got != 6.5 {
		t.Fatalf("stuck 6.5s: age = %v, want 6.5", got)
	}
	m.KafkaTransaction(time.Time{})
	if got := age(); got != 0 {
		t.Fatalf("ended: age = %v, want 0", got)
	}
}

func TestKafkaTransactionTimeoutDefault(t *testing.T) {
	m := New(nil)
	if got := value(t, gather(t, m), "binlog_router_kafka_transaction_timeout_seconds"); got != DefaultTransactionTimeout.Seconds() {
		t.Fatalf("transaction_timeout_seconds = %v, want %v", got, DefaultTransactionTimeout.Seconds())
	}
}

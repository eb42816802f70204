package metrics

import "time"

// KafkaTransaction reports the open Kafka transaction (exactly-once): when
// it was begun, by the local clock, or the zero time when none is open.
// binlog_router_kafka_transaction_age_seconds is computed from it when
// read, so it keeps growing while a commit is stuck.
func (m *Metrics) KafkaTransaction(began time.Time) {
	m.st.mu.Lock()
	m.st.txnBegan = began
	m.st.mu.Unlock()
}

// transactionAge is how long the open Kafka transaction has been open at
// now, 0 when none is.
func (m *Metrics) transactionAge(now time.Time) time.Duration {
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	if m.st.txnBegan.IsZero() {
		return 0
	}
	return max(0, now.Sub(m.st.txnBegan))
}

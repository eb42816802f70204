package metrics

import "github.com/prometheus/client_golang/prometheus"

// newRepairs is binlog_router_kafka_hanging_transactions_repaired_total,
// with both outcomes present from the start.
func newRepairs(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kafka", Name: "hanging_transactions_repaired_total",
		Help: "Transactions of the router's own that Apache Kafka completed without writing all their markers (KAFKA-20734, docs/kafka-issues.md), whose markers the router wrote when it started a session, by decided outcome.",
	}, []string{"outcome"})
	c.WithLabelValues("commit")
	c.WithLabelValues("abort")
	reg.MustRegister(c)
	return c
}

// TransactionRepaired counts one hanging transaction whose decided
// markers a session wrote (committed: the outcome was a commit).
func (m *Metrics) TransactionRepaired(committed bool) {
	outcome := "abort"
	if committed {
		outcome = "commit"
	}
	m.repairs.WithLabelValues(outcome).Inc()
}

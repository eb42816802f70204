package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// outages counts the Kafka outages the relay rode through.
type outages struct {
	total prometheus.Counter
	last  prometheus.Gauge
}

func newOutages(reg *prometheus.Registry) *outages {
	o := &outages{
		total: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "kafka", Name: "outages_total",
			Help: "Kafka outages that ended: the router could not reach Kafka, then Kafka accepted a commit again.",
		}),
		last: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Subsystem: "kafka", Name: "last_outage_seconds",
			Help: "How long the last Kafka outage lasted, from the first failure to reach Kafka to the first commit after it; 0 before any.",
		}),
	}
	reg.MustRegister(o.total, o.last)
	return o
}

// KafkaOutage reports an outage that ended after d: it counts
// binlog_router_kafka_outages_total and sets
// binlog_router_kafka_last_outage_seconds.
func (m *Metrics) KafkaOutage(d time.Duration) {
	m.outages.total.Inc()
	m.outages.last.Set(d.Seconds())
}

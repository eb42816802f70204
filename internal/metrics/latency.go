package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// latency holds the histograms of each commit point: how long its Kafka
// transaction was open, how many records it carried, and how long after
// the source's COMMIT its last transaction reached Kafka.
type latency struct {
	duration prometheus.Histogram
	records  prometheus.Histogram
	delay    prometheus.Histogram
}

func newLatency() *latency {
	return &latency{
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "kafka", Name: "transaction_duration_seconds",
			Help:    "Seconds from the first record of a Kafka transaction (at-least-once: of a commit point) to its commit acknowledged by Kafka.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		records: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "kafka", Name: "transaction_records",
			Help:    "Records per Kafka transaction (at-least-once: per commit point), the checkpoint record not counted.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10), // 1 to 262,144
		}),
		delay: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "commit_delay_seconds",
			Help:    "Seconds from the source's COMMIT of the last transaction a commit point covers (its binlog commit time: whole seconds on MariaDB and MySQL before 8.0) to the commit point acknowledged by Kafka.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
	}
}

func (l *latency) register(reg *prometheus.Registry) {
	reg.MustRegister(l.duration, l.records, l.delay)
}

// observe records one commit point at now: its transaction began at
// began (zero: no record in it), carried records, and covers a source
// transaction committed at sourceTime (zero: none).
func (l *latency) observe(now, began, sourceTime time.Time, records int) {
	if records <= 0 || began.IsZero() {
		return // a checkpoint alone: no records waited for it
	}
	l.duration.Observe(max(now.Sub(began), 0).Seconds())
	l.records.Observe(float64(records))
	if !sourceTime.IsZero() {
		l.delay.Observe(max(now.Sub(sourceTime), 0).Seconds())
	}
}

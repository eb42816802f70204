package inbox

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Stats are the consumer's counters since New.
type Stats struct {
	Processed   int64 // events whose transaction committed
	Duplicates  int64 // events skipped because their inbox row existed
	Retries     int64 // failed attempts that were retried
	DeadLetters int64 // records produced to the dead-letter topic
}

type metrics struct {
	processed, duplicates, retries, deadLetters atomic.Int64

	promProcessed, promDuplicates, promRetries, promDeadLetters prometheus.Counter
	lag                                                         *prometheus.GaugeVec
}

func newMetrics(consumer string, reg prometheus.Registerer) *metrics {
	labels := prometheus.Labels{"consumer": consumer}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
	}
	m := &metrics{
		promProcessed:   counter("inbox_processed_total", "Events whose database transaction committed."),
		promDuplicates:  counter("inbox_duplicates_total", "Events skipped as already consumed (inbox primary key conflict)."),
		promRetries:     counter("inbox_retries_total", "Failed attempts that were retried."),
		promDeadLetters: counter("inbox_dead_letters_total", "Records produced to the dead-letter topic."),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "inbox_lag_records", Help: "Records behind the partition's high watermark after the last handled record.",
			ConstLabels: labels,
		}, []string{"topic", "partition"}),
	}
	if reg != nil {
		reg.MustRegister(m.promProcessed, m.promDuplicates, m.promRetries, m.promDeadLetters, m.lag)
	}
	return m
}

func (m *metrics) incProcessed()  { m.processed.Add(1); m.promProcessed.Inc() }
func (m *metrics) incDuplicate()  { m.duplicates.Add(1); m.promDuplicates.Inc() }
func (m *metrics) incRetry()      { m.retries.Add(1); m.promRetries.Inc() }
func (m *metrics) incDeadLetter() { m.deadLetters.Add(1); m.promDeadLetters.Inc() }

func (m *metrics) setLag(topic string, partition int32, lag int64) {
	if lag < 0 {
		lag = 0
	}
	m.lag.WithLabelValues(topic, strconv.Itoa(int(partition))).Set(float64(lag))
}

func (m *metrics) stats() Stats {
	return Stats{
		Processed:   m.processed.Load(),
		Duplicates:  m.duplicates.Load(),
		Retries:     m.retries.Load(),
		DeadLetters: m.deadLetters.Load(),
	}
}

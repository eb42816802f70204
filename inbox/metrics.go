package inbox

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Stats are the consumer's counters since New, and its current lag.
type Stats struct {
	Processed   int64 // events whose transaction committed
	Duplicates  int64 // events skipped because their inbox row existed
	Retries     int64 // failed attempts that were retried
	DeadLetters int64 // records produced to the dead-letter topic
	// Lag is the number of offsets, over the partitions this consumer owns,
	// between the next record to handle and the last stable offset of the
	// partition's latest fetch.
	Lag int64
}

type metrics struct {
	processed, duplicates, retries, deadLetters atomic.Int64

	promProcessed, promDuplicates, promRetries, promDeadLetters prometheus.Counter
	lag                                                         *prometheus.GaugeVec
}

// newMetrics creates the consumer's collectors and registers them with reg
// (when set). Consumers of the same name in one process share the series:
// a collector already registered for that name is used instead.
func newMetrics(consumer string, reg prometheus.Registerer) (*metrics, error) {
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
			Name:        "inbox_lag_records",
			Help:        "Offsets between the next record to handle and the partition's last stable offset (read_committed end).",
			ConstLabels: labels,
		}, []string{"topic", "partition"}),
	}
	if reg == nil {
		return m, nil
	}
	var added []prometheus.Collector // registered here, undone on failure
	var err error
	for _, c := range []*prometheus.Counter{&m.promProcessed, &m.promDuplicates, &m.promRetries, &m.promDeadLetters} {
		if *c, err = register(reg, *c, &added); err != nil {
			break
		}
	}
	if err == nil {
		m.lag, err = register(reg, m.lag, &added)
	}
	if err != nil {
		for _, c := range added {
			reg.Unregister(c)
		}
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the equal collector registered before.
func register[T prometheus.Collector](reg prometheus.Registerer, c T, added *[]prometheus.Collector) (T, error) {
	err := reg.Register(c)
	if err == nil {
		*added = append(*added, c)
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(T); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("inbox: registering metrics: %w", err)
}

func (m *metrics) incProcessed()  { m.processed.Add(1); m.promProcessed.Inc() }
func (m *metrics) incDuplicate()  { m.duplicates.Add(1); m.promDuplicates.Inc() }
func (m *metrics) incRetry()      { m.retries.Add(1); m.promRetries.Inc() }
func (m *metrics) incDeadLetter() { m.deadLetters.Add(1); m.promDeadLetters.Inc() }

func (m *metrics) setLag(topic string, partition int32, lag int64) {
	m.lag.WithLabelValues(topic, strconv.Itoa(int(partition))).Set(float64(lag))
}

func (m *metrics) deleteLag(topic string, partition int32) {
	m.lag.DeleteLabelValues(topic, strconv.Itoa(int(partition)))
}

func (m *metrics) stats() Stats {
	return Stats{
		Processed:   m.processed.Load(),
		Duplicates:  m.duplicates.Load(),
		Retries:     m.retries.Load(),
		DeadLetters: m.deadLetters.Load(),
	}
}

package metrics

import (
	"errors"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaMetrics are franz-go hooks. Unlike kprom, which registers its
// collectors when a client is created and panics on a second live client,
// they are registered once and shared by every client of the process (the
// producer, the checkpoint loader, the topic check, the HA group), so the
// hooks can go in the Kafka options every client is built from.
type kafkaMetrics struct {
	m *Metrics

	connects, connectErrors, disconnects  prometheus.Counter
	writeBytes, writeErrors               prometheus.Counter
	readBytes, readErrors                 prometheus.Counter
	produceBatches, produceRecords        prometheus.Counter
	produceBytes, produceCompressed       prometheus.Counter
	throttle                              prometheus.Counter
	requestDuration                       prometheus.Histogram
	produceErrors, groupErrors, abortions prometheus.Counter
}

var (
	_ kgo.HookBrokerConnect           = (*kafkaMetrics)(nil)
	_ kgo.HookBrokerDisconnect        = (*kafkaMetrics)(nil)
	_ kgo.HookBrokerWrite             = (*kafkaMetrics)(nil)
	_ kgo.HookBrokerRead              = (*kafkaMetrics)(nil)
	_ kgo.HookBrokerE2E               = (*kafkaMetrics)(nil)
	_ kgo.HookBrokerThrottle          = (*kafkaMetrics)(nil)
	_ kgo.HookProduceBatchWritten     = (*kafkaMetrics)(nil)
	_ kgo.HookProduceRecordUnbuffered = (*kafkaMetrics)(nil)
	_ kgo.HookGroupManageError        = (*kafkaMetrics)(nil)
)

// KafkaHooks returns franz-go hooks that count connections, bytes, request
// durations, produced batches and failed records into binlog_router_kafka_*
// and binlog_router_errors_total{kind="produce"|"kafka_group"}. Pass them
// with kgo.WithHooks to every client; they are safe for any number of
// clients at once.
func (m *Metrics) KafkaHooks() []kgo.Hook { return []kgo.Hook{m.kafka} }

func newKafkaMetrics(m *Metrics) *kafkaMetrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "kafka", Name: name, Help: help})
	}
	return &kafkaMetrics{
		m:                 m,
		connects:          counter("connects_total", "Broker connections opened."),
		connectErrors:     counter("connect_errors_total", "Broker connections that failed to open."),
		disconnects:       counter("disconnects_total", "Broker connections closed."),
		writeBytes:        counter("write_bytes_total", "Bytes written to brokers."),
		writeErrors:       counter("write_errors_total", "Failed writes to brokers."),
		readBytes:         counter("read_bytes_total", "Bytes read from brokers."),
		readErrors:        counter("read_errors_total", "Failed reads from brokers."),
		produceBatches:    counter("produce_batches_total", "Record batches acknowledged by brokers."),
		produceRecords:    counter("produce_records_total", "Records in acknowledged batches, checkpoint records included."),
		produceBytes:      counter("produce_bytes_total", "Uncompressed bytes of acknowledged batches."),
		produceCompressed: counter("produce_compressed_bytes_total", "Compressed bytes of acknowledged batches."),
		throttle:          counter("throttle_seconds_total", "Time brokers throttled requests."),
		abortions:         counter("aborted_records_total", "Buffered records dropped by an aborted Kafka transaction."),
		requestDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "kafka", Name: "request_duration_seconds",
			Help:    "Time from writing a request to a broker to reading its whole response.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		produceErrors: m.errors.WithLabelValues("produce"),
		groupErrors:   m.errors.WithLabelValues("kafka_group"),
	}
}

func (k *kafkaMetrics) register(reg prometheus.Registerer) {
	reg.MustRegister(k.connects, k.connectErrors, k.disconnects, k.writeBytes, k.writeErrors,
		k.readBytes, k.readErrors, k.produceBatches, k.produceRecords, k.produceBytes,
		k.produceCompressed, k.throttle, k.abortions, k.requestDuration)
}

func (k *kafkaMetrics) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		k.connectErrors.Inc()
		return
	}
	k.connects.Inc()
}

func (k *kafkaMetrics) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) { k.disconnects.Inc() }

func (k *kafkaMetrics) OnBrokerWrite(_ kgo.BrokerMetadata, _ int16, n int, _, _ time.Duration, err error) {
	k.writeBytes.Add(float64(n))
	if err != nil {
		k.writeErrors.Inc()
	}
}

func (k *kafkaMetrics) OnBrokerRead(_ kgo.BrokerMetadata, _ int16, n int, _, _ time.Duration, err error) {
	k.readBytes.Add(float64(n))
	if err != nil {
		k.readErrors.Inc()
	}
}

func (k *kafkaMetrics) OnBrokerE2E(_ kgo.BrokerMetadata, _ int16, e2e kgo.BrokerE2E) {
	if e2e.Err() != nil {
		return
	}
	k.requestDuration.Observe(e2e.DurationE2E().Seconds())
}

func (k *kafkaMetrics) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	k.throttle.Add(d.Seconds())
}

func (k *kafkaMetrics) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, b kgo.ProduceBatchMetrics) {
	k.produceBatches.Inc()
	k.produceRecords.Add(float64(b.NumRecords))
	k.produceBytes.Add(float64(b.UncompressedBytes))
	k.produceCompressed.Add(float64(b.CompressedBytes))
}

// OnProduceRecordUnbuffered sees every record leave the buffer; a record
// that failed counts as a produce error, except the ones an abort drops on
// purpose.
func (k *kafkaMetrics) OnProduceRecordUnbuffered(_ *kgo.Record, err error) {
	switch {
	case err == nil:
	case errors.Is(err, kgo.ErrAborting):
		k.abortions.Inc()
	default:
		k.produceErrors.Inc()
	}
}

func (k *kafkaMetrics) OnGroupManageError(error) { k.groupErrors.Inc() }

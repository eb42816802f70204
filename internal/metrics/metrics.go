package metrics

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Namespace prefixes every metric of this package.
const Namespace = "binlog_router"

// Other is the label value that replaces a topic or kind once the limit of
// distinct values is reached.
const Other = "other"

// Defaults of the options.
const (
	DefaultMaxTopics = 1000
	DefaultMaxKinds  = 64
	// DefaultStaleAfter is the shortest readiness window: /readyz fails
	// when neither a checkpoint nor a caught-up heartbeat is more recent.
	DefaultStaleAfter = 30 * time.Second
	// DefaultTransactionTimeout is the transaction timeout reported before
	// TransactionTimeout sets it: the relay's default.
	DefaultTransactionTimeout = 60 * time.Second
)

// Metrics counts what the relay, the binlog stream and franz-go report and
// exposes it to Prometheus. Create it with New; every method is safe for
// concurrent use and returns quickly.
type Metrics struct {
	cfg cfg
	reg *prometheus.Registry

	eventsRouted  *prometheus.CounterVec
	bytesRouted   *prometheus.CounterVec
	transactions  prometheus.Counter
	commits       prometheus.Counter
	commitRecords prometheus.Counter
	checkpoint    *prometheus.GaugeVec
	buffered      atomic.Pointer[func() int64] // the current session's count (BufferedFrom)
	reconnects    prometheus.Counter
	replayed      prometheus.Counter
	errors        *prometheus.CounterVec
	deadLetters   *prometheus.CounterVec
	ddl           prometheus.Counter
	refusing      *prometheus.GaugeVec // set by a ReplicaWatch
	partChanges   *prometheus.CounterVec
	partNotes     partitionNotes
	txnTimeout    prometheus.Gauge
	kafka         *kafkaMetrics
	latency       *latency
	outages       *outages
	repairs       *prometheus.CounterVec
	prunes        *prunes

	topics *limiter
	kinds  *limiter

	// routedCache keeps the two counters of a topic so that RoutedRecords,
	// on the hot path, does one map lookup instead of two label hashes.
	routedMu    sync.Mutex
	routedCache map[string]routedCounters

	events atomic.Uint64 // records routed, for the progress rate
	txns   atomic.Uint64 // transactions seen

	// readyCheck is the extra readiness condition of the Handler, also
	// part of binlog_router_ready.
	readyCheck atomic.Pointer[ReadyFunc]

	st state
}

type routedCounters struct{ events, bytes prometheus.Counter }

// New returns Metrics registered in reg. A nil reg means a new private
// registry with the Go runtime and process collectors, which is what Serve
// exposes. New panics only if reg already holds metrics of the same names
// (a programming error, as with prometheus.MustRegister).
func New(reg *prometheus.Registry, opts ...Opt) *Metrics {
	c := defaultCfg()
	for _, o := range opts {
		o.apply(&c)
	}
	if reg == nil {
		reg = NewRegistry()
	}
	m := &Metrics{
		cfg:         c,
		reg:         reg,
		topics:      newLimiter(c.maxTopics),
		kinds:       newLimiter(c.maxKinds),
		routedCache: map[string]routedCounters{},
	}
	m.st.start = c.now()

	m.eventsRouted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "events_routed_total",
		Help: "Outbox rows produced to Kafka, by topic (topics beyond the limit count as \"other\").",
	}, []string{"topic"})
	m.bytesRouted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "bytes_routed_total",
		Help: "Record value bytes produced to Kafka, by topic (topics beyond the limit count as \"other\").",
	}, []string{"topic"})
	m.transactions = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "transactions_total",
		Help: "Binlog transactions read, with or without outbox rows.",
	})
	m.commits = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "commits_total",
		Help: "Commit points: checkpoints written together with (exactly-once) or after (at-least-once) the records they cover.",
	})
	m.commitRecords = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "committed_records_total",
		Help: "Records covered by commit points.",
	})
	m.checkpoint = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "checkpoint_info",
		Help: "1 for the GTID flavor of the stored checkpoint; the GTID set itself is in /readyz and the progress log.",
	}, []string{"flavor"})
	buffered := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "kafka_buffered_records",
		Help: "Records buffered in the Kafka producer, not yet acknowledged.",
	}, func() float64 {
		if f := m.buffered.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	m.reconnects = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "reconnects_total",
		Help: "Binlog connections lost and retried.",
	})
	m.replayed = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "binlog", Name: "transactions_skipped_total",
		Help: "Binlog transactions the server sent although the GTID set the router asked it to start after already contains them (a source that ignores the requested position); skipped, never published again. Always 0 with a server that honours the position.",
	})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "errors_total",
		Help: "Errors by kind: row error kinds, outbox_update, produce, commit, kafka (a session ended by a Kafka error, resumed from the checkpoint), kafka_group, checkpoint_behind.",
	}, []string{"kind"})
	m.deadLetters = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "dead_letters_total",
		Help: "Rows written to the dead-letter topic, by row error kind.",
	}, []string{"kind"})
	m.ddl = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "ddl_total",
		Help: "DDL statements seen that may touch an outbox table.",
	})
	m.refusing = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "kafka", Name: "partitions_refusing_writes",
		Help: "Partitions the router writes to that refuse acks=all writes, by reason (no_leader, below_min_insync_replicas), as the last look of the replica watch found them.",
	}, []string{"reason"})
	m.partChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: "kafka", Name: "partition_changes_total",
		Help: "Partition count changes seen on topics the router writes to, by topic (--on-partition-change).",
	}, []string{"topic"})
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "lag_seconds",
		Help: "Seconds the checkpoint is behind the source: now minus the source commit time of the last committed transaction, or of the last caught-up heartbeat; 0 while caught up with nothing pending.",
	}, func() float64 { return m.lag(m.cfg.now()).Seconds() })
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "checkpoint_age_seconds",
		Help: "Seconds since the last checkpoint was written (since start before the first). Grows on an idle source, where there is nothing to checkpoint.",
	}, func() float64 { return m.checkpointAge(m.cfg.now()).Seconds() })
	caughtUp := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "caught_up",
		Help: "1 while the last heartbeat found nothing newer on the source and nothing uncommitted.",
	}, func() float64 {
		if m.isCaughtUp() {
			return 1
		}
		return 0
	})
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help: "1, labelled with the binlog-router version and the Go version it was built with.",
	}, []string{"version", "goversion"})
	build.WithLabelValues(c.version, runtime.Version()).Set(1)
	ready := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "ready",
		Help: "1 while /readyz answers 200, 0 while it answers 503 (not streaming yet, stalled, or partitions refusing writes).",
	}, func() float64 {
		if m.handlerReadiness() == nil {
			return 1
		}
		return 0
	})
	txnAge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "kafka", Name: "transaction_age_seconds",
		Help: "Seconds the open Kafka transaction has been open (exactly-once), 0 while none is open; the broker aborts it at binlog_router_kafka_transaction_timeout_seconds.",
	}, func() float64 { return m.transactionAge(m.cfg.now()).Seconds() })
	m.txnTimeout = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Subsystem: "kafka", Name: "transaction_timeout_seconds",
		Help: "The Kafka transaction timeout (--transaction-timeout).",
	})
	m.txnTimeout.Set(c.txnTimeout.Seconds())

	// The kinds this package knows exist from the start at 0, so that the
	// first error of a kind is an increase Prometheus can see (increase()
	// ignores a series' first sample). Row error kinds appear when they
	// first happen.
	for _, kind := range []string{"commit", "kafka", "outbox_update", "checkpoint_behind"} {
		m.errors.WithLabelValues(kind)
	}
	m.kafka = newKafkaMetrics(m)
	m.latency = newLatency()
	m.latency.register(reg)
	reg.MustRegister(m.eventsRouted, m.bytesRouted, m.transactions, m.commits, m.commitRecords,
		m.checkpoint, buffered, m.reconnects, m.replayed, m.errors, m.deadLetters, m.ddl, m.refusing, m.partChanges,
		lag, age, caughtUp, build, ready, txnAge, m.txnTimeout)
	m.kafka.register(reg)
	m.outages = newOutages(reg)
	m.repairs = newRepairs(reg)
	m.prunes = newPrunes(reg)
	return m
}

// NewRegistry returns a private registry with the Go runtime and process
// collectors, as New uses when given nil.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Registry is the registry the metrics are in; Serve exposes it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

package pipeline

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/route"
)

// InvalidPolicy says what happens to an outbox row that cannot be routed.
type InvalidPolicy string

const (
	// InvalidFail stops the loop; the checkpoint stays before the row.
	InvalidFail InvalidPolicy = "fail"
	// InvalidDeadLetter writes the row to the dead-letter topic (in the
	// same Kafka transaction) and goes on.
	InvalidDeadLetter InvalidPolicy = "dead-letter"
)

// Config configures the loop, for the live router (relay.Config embeds
// it) and for a pass (RunPass). Zero values take the defaults noted: the
// Default constants below, which the command line's flag table shows and
// takes too.
type Config struct {
	Route route.Config // how rows become records

	// Cadence bounds each Kafka transaction and paces the checkpoint
	// (--commit-records, --commit-interval, --idle-checkpoint).
	Cadence
	// KafkaTimeout bounds how long a record, flush or transaction end may
	// wait for Kafka; past it the loop stops with an error (nothing is
	// dropped: the checkpoint stays before the undelivered records).
	// Default DefaultKafkaTimeout.
	KafkaTimeout time.Duration
	// TransactionTimeout is the Kafka transaction timeout: a Kafka
	// transaction half this old is committed, inside a binlog transaction
	// if need be. Default DefaultTransactionTimeout.
	TransactionTimeout time.Duration
	// ProducerLimits bound franz-go's produce buffer and record batches
	// (--max-buffered-records, --max-buffered-bytes, --max-message-bytes).
	ProducerLimits
	// QueueRows and QueueBytes bound what the reader may decode ahead of
	// the loop (binlog.Queue). Defaults DefaultQueueRows and
	// DefaultQueueBytes.
	QueueRows  int
	QueueBytes int

	OnInvalid       InvalidPolicy // default DefaultOnInvalid
	DeadLetterTopic string        // default DefaultDeadLetterTopic

	Logger  zerolog.Logger
	Metrics Metrics // default NopMetrics
}

// Cadence is how often the loop commits: one struct from the command
// line (config.Config embeds it) to the loop. Zero or negative values
// take the defaults noted.
type Cadence struct {
	// CommitRecords and CommitInterval bound a Kafka transaction (or, at
	// least once, the rows between checkpoints): the interval is the
	// usual bound; the count caps a catch-up's transactions, each commit
	// being a flush barrier.
	CommitRecords  int           // --commit-records; default DefaultCommitRecords
	CommitInterval time.Duration // --commit-interval; default DefaultCommitInterval
	// IdleCheckpoint is how often the checkpoint advances over
	// transactions without outbox rows. Default DefaultIdleCheckpoint.
	IdleCheckpoint time.Duration // --idle-checkpoint
	// CommitLinger is the least time between two commits made because
	// the reader had nothing more: under a steady trickle of small
	// transactions it lets a few share one Kafka transaction instead of
	// paying one each, trading latency for fewer transactions (each costs
	// the brokers markers and transaction log writes). Default
	// DefaultCommitLinger; negative disables.
	CommitLinger time.Duration // --commit-linger
}

// ProducerLimits bound the Kafka producer of the relay and of replay:
// one struct from the command line (config.Config embeds it) to the
// producer. Zero or negative values take the defaults noted (OrDefaults).
type ProducerLimits struct {
	// MaxBufferedRecords and MaxBufferedBytes bound franz-go's produce
	// buffer: Produce blocks when it is full. Defaults
	// DefaultMaxBufferedRecords and DefaultMaxBufferedBytes.
	MaxBufferedRecords int // --max-buffered-records
	MaxBufferedBytes   int // --max-buffered-bytes
	// MaxMessageBytes is the largest record batch the producer sends; a
	// topic whose max.message.bytes (by default the brokers'
	// message.max.bytes) is smaller gets batches of its own limit
	// (kafka.TopicLimits). A record that cannot fit alone is a row error. Default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int // --max-message-bytes
}

// OrDefaults returns l with every bound that is zero or negative set to
// its default.
func (l ProducerLimits) OrDefaults() ProducerLimits {
	if l.MaxBufferedRecords <= 0 {
		l.MaxBufferedRecords = DefaultMaxBufferedRecords
	}
	if l.MaxBufferedBytes <= 0 {
		l.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = DefaultMaxMessageBytes
	}
	return l
}

// The defaults of Config: the one definition of each, which the command
// line's flag table (internal/config), the relay, replay and validate
// take too.
const (
	DefaultOnInvalid          = InvalidFail
	DefaultCommitRecords      = 50000
	DefaultCommitInterval     = 100 * time.Millisecond
	DefaultCommitLinger       = 2 * time.Millisecond
	DefaultIdleCheckpoint     = 5 * time.Second
	DefaultKafkaTimeout       = 2 * time.Minute
	DefaultTransactionTimeout = 60 * time.Second
	DefaultMaxBufferedRecords = 5000
	DefaultMaxBufferedBytes   = 8 << 20
	DefaultMaxMessageBytes    = 1 << 20
	DefaultQueueRows          = 4096
	DefaultQueueBytes         = 2 << 20
	DefaultDeadLetterTopic    = "binlog-router.dead-letter"
)

// WithDefaults returns c with every field left zero set to its default:
// the settings a loop of c runs with.
func (c Config) WithDefaults() Config {
	if c.CommitRecords <= 0 {
		c.CommitRecords = DefaultCommitRecords
	}
	if c.CommitInterval <= 0 {
		c.CommitInterval = DefaultCommitInterval
	}
	if c.CommitLinger == 0 {
		c.CommitLinger = DefaultCommitLinger
	}
	if c.IdleCheckpoint <= 0 {
		c.IdleCheckpoint = DefaultIdleCheckpoint
	}
	if c.KafkaTimeout <= 0 {
		c.KafkaTimeout = DefaultKafkaTimeout
	}
	if c.TransactionTimeout <= 0 {
		c.TransactionTimeout = DefaultTransactionTimeout
	}
	c.ProducerLimits = c.ProducerLimits.OrDefaults()
	if c.QueueRows <= 0 {
		c.QueueRows = DefaultQueueRows
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = DefaultQueueBytes
	}
	if c.OnInvalid == "" {
		c.OnInvalid = DefaultOnInvalid
	}
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = DefaultDeadLetterTopic
	}
	if c.Metrics == nil {
		c.Metrics = NopMetrics{}
	}
	return c
}

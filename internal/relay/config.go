package relay

import (
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/route"
)

// Delivery is the delivery guarantee.
type Delivery string

const (
	// ExactlyOnce writes records and checkpoint in one Kafka transaction.
	ExactlyOnce Delivery = "exactly-once"
	// AtLeastOnce writes the checkpoint after the records are acknowledged.
	AtLeastOnce Delivery = "at-least-once"
)

// InvalidPolicy says what happens to an outbox row that cannot be routed.
type InvalidPolicy string

const (
	// InvalidFail stops the relay; the checkpoint stays before the row.
	InvalidFail InvalidPolicy = "fail"
	// InvalidDeadLetter writes the row to the dead-letter topic (in the
	// same Kafka transaction) and goes on.
	InvalidDeadLetter InvalidPolicy = "dead-letter"
)

// Config configures a Relay. Zero values take the defaults noted: the
// Default constants below, which the command line's flag table shows and
// takes too.
type Config struct {
	Name            string   // router name: checkpoint key and transactional id; default DefaultName
	Delivery        Delivery // default DefaultDelivery
	CheckpointTopic string   // default checkpoint.DefaultTopic
	Start           string   // without a checkpoint: checkpoint.StartEarliest, StartLatest or "gtid:<set>" (checkpoint.CheckStart); default DefaultStart
	// Kafka are the options of every Kafka client (config's KafkaOpts:
	// seed brokers, client id, record compression, TLS, SASL). Required.
	Kafka []kgo.Opt
	Route route.Config // how rows become records

	// Cadence bounds each Kafka transaction and paces the checkpoint
	// (--commit-records, --commit-interval, --idle-checkpoint).
	Cadence
	// KafkaTimeout bounds how long a record, flush or transaction end may
	// wait for Kafka; past it the relay stops with an error (nothing is
	// dropped: the checkpoint stays before the undelivered records).
	// Default DefaultKafkaTimeout.
	KafkaTimeout time.Duration
	// TransactionTimeout is the Kafka transaction timeout. Default
	// DefaultTransactionTimeout.
	TransactionTimeout time.Duration
	// KafkaTransactions is the number of transactional ids an exactly-once
	// relay uses in turn (kafka.TransactionalIDs), so that a transaction
	// produces while the one before still has its markers written. Default
	// DefaultKafkaTransactions.
	KafkaTransactions int
	// ProducerLimits bound franz-go's produce buffer and record batches
	// (--max-buffered-records, --max-buffered-bytes, --max-message-bytes).
	ProducerLimits
	// QueueRows and QueueBytes bound what the reader may decode ahead of
	// the relay (binlog.Queue). Defaults DefaultQueueRows and
	// DefaultQueueBytes.
	QueueRows  int
	QueueBytes int
	// AutoCreateTopics lets the client ask the brokers to create missing
	// topics (the brokers must allow it). Default DefaultAutoCreateTopics.
	AutoCreateTopics *bool
	// ShutdownTimeout bounds the drain on cancellation. Default
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration

	OnInvalid InvalidPolicy // default DefaultOnInvalid
	// Partitions, if set, are the partition counts of the topics the
	// router writes to, kept across sessions: each session's producer
	// places records by them and ends the session with
	// kafka.PartitionChangeError when a count changed under
	// kafka.PartitionFail (--on-partition-change). Nil: records are placed
	// by the producer's own view, refreshed every 5 minutes.
	Partitions      *kafka.PartitionCounts
	DeadLetterTopic string // default DefaultDeadLetterTopic

	// HA elects one active relay per Name through a Kafka consumer group;
	// the others wait as standbys. HATimeout is the group session timeout:
	// how long a silent active relay keeps its role. Default
	// DefaultHATimeout.
	HA        bool
	HATimeout time.Duration

	Source  string // source address, recorded in checkpoints (information)
	Version string
	Logger  zerolog.Logger
	Metrics Metrics
}

// Cadence is how often the relay commits: one struct from the command
// line (config.Config embeds it) to the relay. Zero or negative values
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
// line's flag table (internal/config), replay and validate take too.
const (
	DefaultName               = "binlog-router"
	DefaultDelivery           = ExactlyOnce
	DefaultOnInvalid          = InvalidFail
	DefaultStart              = checkpoint.StartEarliest
	DefaultCommitRecords      = 50000
	DefaultCommitInterval     = 100 * time.Millisecond
	DefaultCommitLinger       = 2 * time.Millisecond
	DefaultIdleCheckpoint     = 5 * time.Second
	DefaultKafkaTimeout       = 2 * time.Minute
	DefaultTransactionTimeout = 60 * time.Second
	DefaultKafkaTransactions  = 2
	DefaultMaxBufferedRecords = 10000
	DefaultMaxBufferedBytes   = 32 << 20
	DefaultMaxMessageBytes    = 1 << 20
	DefaultQueueRows          = 4096
	DefaultQueueBytes         = 4 << 20
	DefaultAutoCreateTopics   = true
	DefaultShutdownTimeout    = 10 * time.Second
	DefaultDeadLetterTopic    = "binlog-router.dead-letter"
	DefaultHATimeout          = 10 * time.Second
)

// WithDefaults returns c with every field left zero set to its default,
// as New sets it: the settings a relay of c runs with.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// setDefaults sets every field left zero to its default: the Default
// constants above.
func (c *Config) setDefaults() {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Delivery == "" {
		c.Delivery = DefaultDelivery
	}
	if c.CheckpointTopic == "" {
		c.CheckpointTopic = checkpoint.DefaultTopic
	}
	if c.Start == "" {
		c.Start = DefaultStart
	}
	if c.KafkaTransactions <= 0 {
		c.KafkaTransactions = DefaultKafkaTransactions
	}
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
	if c.AutoCreateTopics == nil {
		t := DefaultAutoCreateTopics
		c.AutoCreateTopics = &t
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.OnInvalid == "" {
		c.OnInvalid = DefaultOnInvalid
	}
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = DefaultDeadLetterTopic
	}
	if c.HATimeout <= 0 {
		c.HATimeout = DefaultHATimeout
	}
	if c.Metrics == nil {
		c.Metrics = nopMetrics{}
	}
}

func (c *Config) validate() error {
	if c.Delivery != ExactlyOnce && c.Delivery != AtLeastOnce {
		return fmt.Errorf("invalid delivery %q: use exactly-once or at-least-once", c.Delivery)
	}
	if err := checkpoint.CheckStart(c.Start); err != nil {
		return err
	}
	if len(c.Kafka) == 0 {
		return errors.New("no Kafka connection options: set --kafka-brokers")
	}
	if err := route.ValidTopic(c.CheckpointTopic); err != nil {
		return fmt.Errorf("checkpoint topic: %w", err)
	}
	return nil
}

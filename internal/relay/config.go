package relay

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
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

// Config configures a Relay. Zero values take the defaults noted.
type Config struct {
	Name            string   // router name: checkpoint key and transactional id; default "binlog-router"
	Delivery        Delivery // default ExactlyOnce
	CheckpointTopic string   // default checkpoint.DefaultTopic
	Start           string   // without a checkpoint: "earliest" (default), "latest" or "gtid:<set>"
	Kafka           []kgo.Opt
	Route           route.Config

	// CommitRecords and CommitInterval bound a Kafka transaction (or, at
	// least once, the rows between checkpoints). Defaults 50000 and 100ms:
	// the interval is the usual bound; the count caps a catch-up's
	// transactions, each commit being a flush barrier.
	CommitRecords  int
	CommitInterval time.Duration
	// CommitLinger is the least time between two commits made because
	// the reader had nothing more: under a steady trickle of small
	// transactions it lets a few share one Kafka transaction instead of
	// paying one each. Default 2ms; negative disables.
	CommitLinger time.Duration
	// IdleCheckpoint is how often the checkpoint advances over
	// transactions without outbox rows. Default 5s.
	IdleCheckpoint time.Duration
	// KafkaTimeout bounds how long a record, flush or transaction end may
	// wait for Kafka; past it the relay stops with an error (nothing is
	// dropped: the checkpoint stays before the undelivered records).
	// Default 2m.
	KafkaTimeout time.Duration
	// TransactionTimeout is the Kafka transaction timeout. Default 60s.
	TransactionTimeout time.Duration
	// MaxBufferedRecords and MaxBufferedBytes bound franz-go's produce
	// buffer. Defaults 10000 and 32 MiB.
	MaxBufferedRecords int
	MaxBufferedBytes   int
	// MaxMessageBytes is the largest record batch the producer sends; a
	// topic whose max.message.bytes (by default the brokers'
	// message.max.bytes) is smaller gets batches of its own limit
	// (limits.go). A record that cannot fit alone is a row error. Default
	// 1 MiB.
	MaxMessageBytes int
	// QueueRows and QueueBytes bound what the reader may decode ahead of
	// the relay (binlog.Queue). Defaults 4096 rows and 4 MiB.
	QueueRows  int
	QueueBytes int
	// AutoCreateTopics lets the client ask the brokers to create missing
	// topics (the brokers must allow it). Default true.
	AutoCreateTopics *bool
	// ShutdownTimeout bounds the drain on cancellation. Default 10s.
	ShutdownTimeout time.Duration

	OnInvalid       InvalidPolicy // default InvalidFail
	DeadLetterTopic string        // default "binlog-router.dead-letter"

	// HA elects one active relay per Name through a Kafka consumer group;
	// the others wait as standbys. HATimeout is the group session timeout:
	// how long a silent active relay keeps its role. Default 10s.
	HA        bool
	HATimeout time.Duration

	Source  string // source address, recorded in checkpoints (information)
	Version string
	Logger  zerolog.Logger
	Metrics Metrics
}

// Defaults of the producer and queue bounds, shared by replay and the
// command-line defaults.
const (
	DefaultCommitRecords      = 50000
	DefaultTransactionTimeout = 60 * time.Second
	DefaultMaxBufferedRecords = 10000
	DefaultMaxBufferedBytes   = 32 << 20
	DefaultMaxMessageBytes    = 1 << 20
	DefaultQueueRows          = 4096
	DefaultQueueBytes         = 4 << 20
)

func (c *Config) setDefaults() {
	if c.Name == "" {
		c.Name = "binlog-router"
	}
	if c.Delivery == "" {
		c.Delivery = ExactlyOnce
	}
	if c.CheckpointTopic == "" {
		c.CheckpointTopic = checkpoint.DefaultTopic
	}
	if c.Start == "" {
		c.Start = "earliest"
	}
	if c.CommitRecords <= 0 {
		c.CommitRecords = DefaultCommitRecords
	}
	if c.CommitInterval <= 0 {
		c.CommitInterval = 100 * time.Millisecond
	}
	if c.CommitLinger == 0 {
		c.CommitLinger = 2 * time.Millisecond
	}
	if c.IdleCheckpoint <= 0 {
		c.IdleCheckpoint = 5 * time.Second
	}
	if c.KafkaTimeout <= 0 {
		c.KafkaTimeout = 2 * time.Minute
	}
	if c.TransactionTimeout <= 0 {
		c.TransactionTimeout = DefaultTransactionTimeout
	}
	if c.MaxBufferedRecords <= 0 {
		c.MaxBufferedRecords = DefaultMaxBufferedRecords
	}
	if c.MaxBufferedBytes <= 0 {
		c.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.QueueRows <= 0 {
		c.QueueRows = DefaultQueueRows
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = DefaultQueueBytes
	}
	if c.AutoCreateTopics == nil {
		t := true
		c.AutoCreateTopics = &t
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 10 * time.Second
	}
	if c.OnInvalid == "" {
		c.OnInvalid = InvalidFail
	}
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = "binlog-router.dead-letter"
	}
	if c.HATimeout <= 0 {
		c.HATimeout = 10 * time.Second
	}
	if c.Metrics == nil {
		c.Metrics = nopMetrics{}
	}
}

func (c *Config) validate() error {
	if c.Delivery != ExactlyOnce && c.Delivery != AtLeastOnce {
		return fmt.Errorf("invalid delivery %q: use exactly-once or at-least-once", c.Delivery)
	}
	if c.Start != "earliest" && c.Start != "latest" && !strings.HasPrefix(c.Start, "gtid:") {
		return fmt.Errorf("invalid start %q: use earliest, latest or gtid:<set>", c.Start)
	}
	if len(c.Kafka) == 0 {
		return errors.New("no Kafka connection options: set --kafka-brokers")
	}
	if err := route.ValidTopic(c.CheckpointTopic); err != nil {
		return fmt.Errorf("checkpoint topic: %w", err)
	}
	return nil
}

// TransactionalID is the Kafka transactional id of a router name.
func TransactionalID(name string) string { return "binlog-router-" + name }

package relay

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
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

// Config configures a Relay: the loop's configuration (pipeline.Config,
// embedded) and what only the live router has. Zero values take the
// defaults noted: the Default constants below and pipeline's, which the
// command line's flag table shows and takes too.
type Config struct {
	pipeline.Config

	Name            string   // router name: checkpoint key and transactional id; default DefaultName
	Delivery        Delivery // default DefaultDelivery
	CheckpointTopic string   // default checkpoint.DefaultTopic
	Start           string   // without a checkpoint: checkpoint.StartEarliest, StartLatest or "gtid:<set>" (checkpoint.CheckStart); default DefaultStart
	// Kafka are the options of every Kafka client (config's KafkaOpts:
	// seed brokers, client id, record compression, TLS, SASL). Required.
	Kafka []kgo.Opt

	// KafkaTransactions is the number of transactional ids an exactly-once
	// relay uses in turn (kafka.TransactionalIDs), so that a transaction
	// produces while the one before still has its markers written. Default
	// DefaultKafkaTransactions.
	KafkaTransactions int
	// AutoCreateTopics lets the client ask the brokers to create missing
	// topics (the brokers must allow it). Default DefaultAutoCreateTopics.
	AutoCreateTopics *bool
	// ShutdownTimeout bounds the drain on cancellation
	// (pipeline.Live.ShutdownTimeout). Default DefaultShutdownTimeout.
	ShutdownTimeout time.Duration

	// Partitions, if set, are the partition counts of the topics the
	// router writes to, kept across sessions: each session's producer
	// places records by them and ends the session with
	// kafka.PartitionChangeError when a count changed under
	// kafka.PartitionFail (--on-partition-change). Nil: records are placed
	// by the producer's own view, refreshed every 5 minutes.
	Partitions *kafka.PartitionCounts

	// HA elects one active relay per Name through a Kafka consumer group;
	// the others wait as standbys. HATimeout is the group session timeout:
	// how long a silent active relay keeps its role. Default
	// DefaultHATimeout.
	HA        bool
	HATimeout time.Duration

	Source  string // source address, recorded in checkpoints (information)
	Version string // the router's version, recorded in checkpoints
	// Metrics receives the loop's measurements and the relay's own. It
	// stands in for pipeline.Config's Metrics, which New sets to it.
	Metrics Metrics
}

// The defaults of Config beyond pipeline's: the one definition of each,
// which the command line's flag table (internal/config) and validate take
// too.
const (
	DefaultName              = "binlog-router"
	DefaultDelivery          = ExactlyOnce
	DefaultStart             = checkpoint.StartEarliest
	DefaultKafkaTransactions = 2
	DefaultAutoCreateTopics  = true
	DefaultShutdownTimeout   = 10 * time.Second
	DefaultHATimeout         = 10 * time.Second
)

// WithDefaults returns c with every field left zero set to its default,
// as New sets it: the settings a relay of c runs with.
func (c Config) WithDefaults() Config {
	c.setDefaults()
	return c
}

// setDefaults sets every field left zero to its default: the Default
// constants above and pipeline's (pipeline.Config.WithDefaults).
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
	if c.AutoCreateTopics == nil {
		t := DefaultAutoCreateTopics
		c.AutoCreateTopics = &t
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.HATimeout <= 0 {
		c.HATimeout = DefaultHATimeout
	}
	if c.Metrics == nil {
		c.Metrics = nopMetrics{}
	}
	c.Config.Metrics = c.Metrics
	c.Config = c.Config.WithDefaults()
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

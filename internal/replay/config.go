package replay

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
)

// Config configures one replay. Zero values take the defaults noted.
type Config struct {
	// From: replay starts after the transactions in this set. Required;
	// the empty set starts at the oldest binlog the server has.
	From *gtid.Set
	// FromTime, when set, skips transactions committed before it, up to
	// the first one committed at or after it.
	FromTime time.Time
	// To, when set, ends the replay after the last transaction it
	// contains; only transactions it contains are replayed. It must be
	// within the server's executed set. Default: the server's executed set
	// when the reader connected.
	To *gtid.Set
	// ToTime, when set, ends the replay at the first transaction committed
	// after it.
	ToTime time.Time

	// Route builds the records, as the live router does.
	Route route.Config
	// TopicPrefix is prepended to every record's topic ("" = the original
	// topics), not to DeadLetterTopic.
	TopicPrefix string
	// OnInvalid is what a row that cannot be routed does, as in the
	// live router: stop the replay (pipeline.InvalidFail, the default) or
	// go to DeadLetterTopic (default pipeline.DefaultDeadLetterTopic).
	OnInvalid       pipeline.InvalidPolicy
	DeadLetterTopic string

	// DryRun writes each record as a JSON line to Out (default
	// io.Discard) instead of producing it.
	DryRun bool
	Out    io.Writer

	// Kafka are the options of every Kafka client (config's KafkaOpts:
	// seed brokers, client id, record compression, TLS, SASL).
	Kafka []kgo.Opt
	// TransactionalID is the producer's transactional id. Required unless
	// DryRun; it must not be a router's.
	TransactionalID string
	// CommitRecords: a Kafka transaction is committed at the first binlog
	// transaction boundary after this many records, or earlier by the
	// loop's other rules (pipeline.DefaultCommitInterval, an idle reader).
	// Default pipeline.DefaultCommitRecords.
	CommitRecords int
	// TransactionTimeout is the Kafka transaction timeout. Default
	// pipeline.DefaultTransactionTimeout.
	TransactionTimeout time.Duration
	// ProducerLimits bound the producer as in the relay; zero values take
	// pipeline's defaults (pipeline.ProducerLimits.OrDefaults).
	pipeline.ProducerLimits
	// AutoCreateTopics lets the client ask the brokers to create missing
	// topics.
	AutoCreateTopics bool
	// QueueRows and QueueBytes bound what the reader decodes ahead of the
	// producer. Defaults pipeline.DefaultQueueRows and DefaultQueueBytes.
	QueueRows  int
	QueueBytes int

	Logger zerolog.Logger
}

// setDefaults sets every field left zero to its default: pipeline's
// Default constants, as the live router's.
func (c *Config) setDefaults() {
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.CommitRecords <= 0 {
		c.CommitRecords = pipeline.DefaultCommitRecords
	}
	if c.TransactionTimeout <= 0 {
		c.TransactionTimeout = pipeline.DefaultTransactionTimeout
	}
	c.ProducerLimits = c.ProducerLimits.OrDefaults()
	if c.QueueRows <= 0 {
		c.QueueRows = pipeline.DefaultQueueRows
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = pipeline.DefaultQueueBytes
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.From == nil {
		errs = append(errs, errors.New("no start position: set --from-gtid (the empty set \"\" starts at the oldest binlog) or --from-time"))
	}
	if c.To != nil && !c.ToTime.IsZero() {
		errs = append(errs, errors.New("--to-gtid and --to-time both set: give one"))
	}
	if !c.FromTime.IsZero() && !c.ToTime.IsZero() && c.ToTime.Before(c.FromTime) {
		errs = append(errs, fmt.Errorf("--to-time %s is before --from-time %s", c.ToTime.Format(time.RFC3339), c.FromTime.Format(time.RFC3339)))
	}
	if c.TopicPrefix != "" {
		if err := route.ValidTopic(c.TopicPrefix + "x"); err != nil {
			errs = append(errs, fmt.Errorf("--topic-prefix %q: %w", c.TopicPrefix, err))
		}
	}
	if _, err := route.New(c.Route); err != nil {
		errs = append(errs, err)
	}
	if len(c.Kafka) == 0 {
		errs = append(errs, errors.New("no Kafka connection options: set --kafka-brokers"))
	}
	if !c.DryRun && c.TransactionalID == "" {
		errs = append(errs, errors.New("no transactional id for the replay producer"))
	}
	return errors.Join(errs...)
}

// loopConfig is the loop's configuration of the replay: pipeline's
// defaults for what the replay does not set.
func (c *Config) loopConfig() pipeline.Config {
	return pipeline.Config{
		Route:              c.Route,
		Cadence:            pipeline.Cadence{CommitRecords: c.CommitRecords},
		TransactionTimeout: c.TransactionTimeout,
		ProducerLimits:     c.ProducerLimits,
		QueueRows:          c.QueueRows,
		QueueBytes:         c.QueueBytes,
		OnInvalid:          c.OnInvalid,
		DeadLetterTopic:    c.DeadLetterTopic,
		Logger:             c.Logger,
	}
}

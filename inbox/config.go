package inbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Handler applies one event inside tx, the transaction in which its inbox
// row was inserted. It must do all its database work through tx and must
// not commit or roll it back. An error rolls the transaction back and the
// event is retried. ctx ends when Run stops or the partition is lost, and
// the handler should then return. When the partition is revoked in a
// rebalance the handler is waited for, so it should finish well within the
// group's rebalance timeout (kgo.RebalanceTimeout, 60 s by default).
type Handler func(ctx context.Context, tx *sql.Tx, ev Event) error

// FailurePolicy says what happens to an event whose handler failed
// MaxAttempts times.
type FailurePolicy int

const (
	// DeadLetter produces the record to DeadLetterTopic and moves on.
	DeadLetter FailurePolicy = iota
	// Stop ends Run with a *HandlerError; the offset stays before the
	// event, so the next run starts with it.
	Stop
)

// MissingIDPolicy says what happens to a record without an "id" header.
type MissingIDPolicy int

const (
	// MissingIDReject sends the record to the dead-letter topic (or stops,
	// with FailurePolicy Stop) without calling the handler.
	MissingIDReject MissingIDPolicy = iota
	// MissingIDDerive uses "topic/partition/offset" as the event id: a
	// redelivery of that record is then a duplicate, a copy of it at another
	// offset (a replay) is not.
	MissingIDDerive
)

// Defaults of Config.
const (
	DefaultMaxAttempts      = 10
	DefaultInitialBackoff   = time.Second
	DefaultMaxBackoff       = 60 * time.Second
	DefaultWorkers          = 4
	DefaultCommitInterval   = time.Second
	DefaultMaxPollRecords   = 500
	DefaultPartitionBacklog = 1000
	DefaultDeadLetterTopic  = "{consumer}.dead-letter"
)

// Config configures a Consumer. Brokers, Topics, ConsumerName, DB, Dialect
// and Handler are required.
type Config struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string
	// Topics are the topics to consume.
	Topics []string
	// ConsumerName is the consumer_name of the inbox rows and, unless
	// Group is set, the Kafka consumer group.
	ConsumerName string
	// Group is the consumer group id; default ConsumerName.
	Group string
	// DB is the database holding the inbox table and the business tables.
	DB *sql.DB
	// Dialect is DB's dialect: MySQL or PostgreSQL.
	Dialect Dialect
	// Table is the inbox table ("table" or "schema.table"); default "inbox".
	// Create it with CreateTable or DDL.
	Table string
	// Handler applies each event.
	Handler Handler
	// TxOptions are the options of each transaction; nil is the driver's
	// default isolation level.
	TxOptions *sql.TxOptions

	// MaxAttempts bounds the attempts per event (at least 1); default 10.
	MaxAttempts int
	// InitialBackoff is the wait after the first failed attempt, doubled
	// after each further one up to MaxBackoff, with jitter; defaults 1s and
	// 60s.
	InitialBackoff, MaxBackoff time.Duration
	// OnFailure is DeadLetter (default) or Stop.
	OnFailure FailurePolicy
	// DeadLetterTopic receives failed and rejected records; "{consumer}" is
	// replaced by ConsumerName. Default "{consumer}.dead-letter". Under
	// DeadLetter, Run creates it (broker default partitions and replication)
	// if it does not exist, and fails if it can neither find nor create it.
	DeadLetterTopic string
	// MissingID is MissingIDReject (default) or MissingIDDerive.
	MissingID MissingIDPolicy

	// Workers bounds the partitions handled at once; default 4. A
	// partition waiting to retry holds no worker.
	Workers int
	// CommitInterval is the longest time a handled record's offset waits
	// to be committed to Kafka; default 1s. Offsets are also committed when
	// partitions are revoked and on shutdown.
	CommitInterval time.Duration
	// MaxPollRecords bounds the records taken from the client per poll;
	// default 500.
	MaxPollRecords int
	// PartitionBacklog bounds the records fetched and waiting to be handled
	// per partition (at least MaxPollRecords); default 1000, or
	// MaxPollRecords if larger. A partition is not fetched while its
	// backlog holds more than PartitionBacklog-MaxPollRecords records (one
	// more poll might not fit), until it is down to half of that.
	PartitionBacklog int

	// KafkaOptions are appended to the client options (TLS, SASL, ...), so
	// they may override defaults such as kgo.FetchMaxWait (500 ms here).
	// Options that the consumer relies on (group, balancer, isolation
	// level, control records, commit and rebalance callbacks) must not be
	// overridden.
	KafkaOptions []kgo.Opt
	// Logger receives the consumer's log lines; nil discards them.
	Logger *zerolog.Logger
	// Registerer, when set, registers the consumer's metrics.
	Registerer prometheus.Registerer
	// Hooks observe the consumer's steps, for instrumentation and tests.
	Hooks Hooks
}

// Hooks are called synchronously from the consumer's goroutines; nil
// fields are skipped.
type Hooks struct {
	// OnAssigned runs when partitions are assigned, before they are
	// fetched.
	OnAssigned func(assigned map[string][]int32)
	// AfterCommit runs after the database transaction of ev committed and
	// before its offset is committed to Kafka.
	AfterCommit func(ev Event)
	// OnDuplicate runs after ev was skipped because its inbox row exists.
	OnDuplicate func(ev Event)
	// OnRevoked runs when partitions are revoked, before the work on them
	// is drained and their offsets committed. The group also calls it with
	// an empty map at the end of each session.
	OnRevoked func(revoked map[string][]int32)
}

func (c *Config) setDefaults() {
	if c.Group == "" {
		c.Group = c.ConsumerName
	}
	if c.Table == "" {
		c.Table = DefaultTable
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.InitialBackoff == 0 {
		c.InitialBackoff = DefaultInitialBackoff
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = DefaultDeadLetterTopic
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.CommitInterval == 0 {
		c.CommitInterval = DefaultCommitInterval
	}
	if c.MaxPollRecords == 0 {
		c.MaxPollRecords = DefaultMaxPollRecords
	}
	if c.PartitionBacklog == 0 {
		c.PartitionBacklog = max(DefaultPartitionBacklog, c.MaxPollRecords)
	}
}

func (c *Config) validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("Brokers is empty"))
	}
	if len(c.Topics) == 0 {
		errs = append(errs, errors.New("Topics is empty"))
	}
	if c.ConsumerName == "" {
		errs = append(errs, errors.New("ConsumerName is empty"))
	}
	if c.DB == nil {
		errs = append(errs, errors.New("DB is nil"))
	}
	if c.Handler == nil {
		errs = append(errs, errors.New("Handler is nil"))
	}
	if c.Dialect != MySQL && c.Dialect != PostgreSQL {
		errs = append(errs, fmt.Errorf("Dialect %v: want inbox.MySQL or inbox.PostgreSQL", c.Dialect))
	}
	if c.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("MaxAttempts %d: want at least 1", c.MaxAttempts))
	}
	if c.InitialBackoff < 0 || c.MaxBackoff < c.InitialBackoff {
		errs = append(errs, fmt.Errorf("backoff %v..%v: want 0 <= InitialBackoff <= MaxBackoff", c.InitialBackoff, c.MaxBackoff))
	}
	if c.Workers < 1 || c.MaxPollRecords < 1 || c.CommitInterval <= 0 {
		errs = append(errs, fmt.Errorf("Workers %d, MaxPollRecords %d, CommitInterval %v: want at least 1, 1 and a positive duration",
			c.Workers, c.MaxPollRecords, c.CommitInterval))
	}
	if c.PartitionBacklog < c.MaxPollRecords {
		errs = append(errs, fmt.Errorf("PartitionBacklog %d: want at least MaxPollRecords (%d)", c.PartitionBacklog, c.MaxPollRecords))
	}
	if c.OnFailure != DeadLetter && c.OnFailure != Stop {
		errs = append(errs, fmt.Errorf("OnFailure %d: want inbox.DeadLetter or inbox.Stop", c.OnFailure))
	}
	if c.MissingID != MissingIDReject && c.MissingID != MissingIDDerive {
		errs = append(errs, fmt.Errorf("MissingID %d: want inbox.MissingIDReject or inbox.MissingIDDerive", c.MissingID))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("inbox config: %w", err)
	}
	return nil
}

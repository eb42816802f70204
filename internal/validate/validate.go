package validate

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/contract"
	"github.com/binlog-router/binlog-router/internal/route"
)

// DefaultTimeout bounds each network step when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config says what to validate: the same settings `binlog-router run` gets,
// as the relay runs with them (config's ValidateConfig builds it). Only
// TopicTemplate, Timeout and Now have defaults.
type Config struct {
	// MySQL is the reader's configuration. Used: Addr, User, Password, TLS,
	// ServerID, Tables and Columns.
	MySQL binlog.Config
	// Kafka are the options of every Kafka client (config's KafkaOpts:
	// seed brokers, client id, record compression, TLS, SASL), as for the
	// relay.
	Kafka []kgo.Opt
	// Brokers are the seed brokers, for messages only.
	Brokers []string
	// KafkaAuth, if set, checks the Kafka credentials first (the config
	// package's CheckKafkaAuth); its error, which says what to fix, fails
	// the kafka check.
	KafkaAuth func(context.Context) error

	Name            string // router name: the checkpoint key
	CheckpointTopic string // the checkpoint topic
	Start           string // --start, used when no checkpoint is stored
	ExactlyOnce     bool   // --delivery exactly-once: Kafka transactions are needed
	TopicTemplate   string // --topic-template: the outbox topics; default route.DefaultTopicTemplate, as for the router
	DeadLetterTopic string // --dead-letter-topic with --on-invalid=dead-letter; "" otherwise

	// MaxMessageBytes is --max-message-bytes, compared with the brokers'
	// message.max.bytes and the topics' max.message.bytes.
	MaxMessageBytes int

	// AllowMissingTable is --allow-missing-table: a missing outbox table
	// warns instead of failing, unless a table of a close name exists.
	AllowMissingTable bool

	// RequireUUID and ValidateJSON are --require-uuid and --validate-json:
	// an event id column that cannot hold a UUID, or a payload column of
	// bytes, is judged with them. (MySQL.UUIDBinary and
	// MySQL.DatetimeZone are the other flags the column types are
	// judged with.)
	RequireUUID, ValidateJSON bool

	// Contracts are --contracts-dir's compiled contracts; nil when none.
	// Validate lists them and, per outbox table, the event types of its
	// RecentRows newest rows that have none.
	Contracts *contract.Set

	// Timeout bounds each network step. Default DefaultTimeout.
	Timeout time.Duration
	// Now is the clock for the checkpoint's age. Default time.Now.
	Now func() time.Time
}

// setDefaults sets TopicTemplate, Timeout and Now if they are zero.
func (c *Config) setDefaults() {
	if c.TopicTemplate == "" {
		c.TopicTemplate = route.DefaultTopicTemplate
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Run checks the source server, the outbox tables, Kafka and the stored
// checkpoint, in that order, and returns one Check per requirement. An
// unreachable server or cluster is one failed check, and the checks that
// need it are left out; once ctx ends, the remaining steps fail at once.
func Run(ctx context.Context, cfg Config) []Check {
	cfg.setDefaults()
	v := &validator{cfg: cfg, parent: ctx}
	m := v.mysql()
	k := v.kafka(m)
	v.retention(m, k)
	v.position(m, k)
	return v.checks
}

// validator accumulates checks.
type validator struct {
	cfg    Config
	parent context.Context
	checks []Check
}

func (v *validator) add(c ...Check) { v.checks = append(v.checks, c...) }

// step returns a context for one network step.
func (v *validator) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(v.parent, v.cfg.Timeout)
}

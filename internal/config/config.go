package config

import (
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/contract"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Config is everything a binlog-router command can be told. Each field is
// the destination of the flag its comment names; the flag table
// (flagtable.go) gives each flag's default, usage and commands, and
// Default returns those defaults.
type Config struct {
	MySQLAddr         string         // --mysql-addr: source server host:port
	MySQLUser         string         // --mysql-user
	MySQLPassword     string         // --mysql-password (prefer the env variable or --mysql-password-file)
	MySQLPasswordFile string         // --mysql-password-file: read the password from this file
	ServerID          uint           // --server-id: replica id, unique among the server's replicas
	OutboxTables      []string       // --outbox-table db.table (repeatable, or comma separated)
	AllowMissingTable bool           // --allow-missing-table: start although an outbox table does not exist yet
	Preset            string         // --preset: outbox column preset, default or debezium
	Columns           schema.Columns // --column-*: overrides of the preset's column names
	OnUpdate          string         // --on-update warn|fail
	OnInvalid         string         // --on-invalid fail|dead-letter
	OnPartitionChange string         // --on-partition-change warn|fail
	DeadLetterTopic   string         // --dead-letter-topic

	KafkaBrokers      []string // --kafka-brokers a:9092,b:9092
	TopicTemplate     string   // --topic-template; default from the preset
	ValidateJSON      bool     // --validate-json
	RequireUUID       bool     // --require-uuid
	Envelope          string   // --envelope plain|cloudevents|cloudevents-structured
	CloudEventsSource string   // --cloudevents-source: the CloudEvents source attribute ("" = route.DefaultCloudEventsSource)
	ContractsDir      string   // --contracts-dir: JSON Schemas of the payloads ("" = no check)
	ContractsMissing  string   // --contracts-missing allow|fail: an event type with no contract
	UUIDBinaryLayout  string   // --uuid-binary-layout standard|swapped: byte order of 16-byte binary event ids
	DatetimeZone      string   // --datetime-zone: time zone of DATETIME created_at values ("" = the server's)
	AutoCreateTopics  bool     // --auto-create-topics

	Name            string // --name
	CheckpointTopic string // --checkpoint-topic
	Start           string // --start earliest|latest|gtid:<set>
	Delivery        string // --delivery exactly-once|at-least-once
	// Cadence is --commit-records, --commit-interval and
	// --idle-checkpoint: the relay's own struct, the flags' destination,
	// handed to it whole (replay takes its CommitRecords).
	pipeline.Cadence

	EventCache         int           // --event-cache
	Compression        string        // --compression none|snappy|lz4|zstd|gzip
	MemoryLimit        int64         // --memory-limit: the Go runtime's soft memory limit (GOMEMLIMIT wins)
	TransactionTimeout time.Duration // --transaction-timeout
	KafkaTransactions  int           // --kafka-transactions: transactional ids used in turn
	KafkaTimeout       time.Duration // --kafka-timeout
	ShutdownTimeout    time.Duration // --shutdown-timeout
	// ProducerLimits are --max-buffered-records, --max-buffered-bytes and
	// --max-message-bytes: the relay's and replay's own struct, the
	// flags' destination, handed to them whole.
	pipeline.ProducerLimits

	MetricsAddr string        // --metrics-addr: serve /metrics, /healthz, /readyz here ("" = off)
	HA          bool          // --ha: elect one active router per name through a Kafka group
	HATimeout   time.Duration // --ha-session-timeout: a standby takes over after this much silence

	LogFormat string // --log-format json|console
	LogLevel  string // --log-level

	// ConfigFile is --config (env BINLOG_ROUTER_CONFIG): a YAML or TOML
	// file of flag-name keys, below flags and env in precedence (file.go).
	ConfigFile string

	// TLS to MySQL/MariaDB (security.go), for the SQL and the replication
	// connection alike.
	MySQLTLSMode       string // --mysql-tls disabled|required|verify-ca|verify-identity
	MySQLTLSCA         string // --mysql-tls-ca: PEM CA bundle (verify-ca, verify-identity; default the system roots)
	MySQLTLSCert       string // --mysql-tls-cert: PEM client certificate, with MySQLTLSKey
	MySQLTLSKey        string // --mysql-tls-key
	MySQLTLSServerName string // --mysql-tls-server-name: with verify-identity; default the host of MySQLAddr

	// TLS and SASL to Kafka (security.go).
	KafkaTLS                   bool   // --kafka-tls
	KafkaTLSCA                 string // --kafka-tls-ca: PEM CA bundle; default the system roots
	KafkaTLSCert               string // --kafka-tls-cert: PEM client certificate, with KafkaTLSKey
	KafkaTLSKey                string // --kafka-tls-key
	KafkaTLSServerName         string // --kafka-tls-server-name; default the host of each broker
	KafkaTLSInsecureSkipVerify bool   // --kafka-tls-insecure-skip-verify: DANGEROUS, tests only
	KafkaSASLMechanism         string // --kafka-sasl-mechanism PLAIN|SCRAM-SHA-256|SCRAM-SHA-512; "" is none
	KafkaSASLUser              string // --kafka-sasl-user
	KafkaSASLPassword          string // --kafka-sasl-password (prefer the env variable or the file)
	KafkaSASLPasswordFile      string // --kafka-sasl-password-file: read the password from this file

	DryRun bool // --dry-run: replay prints the records, prune counts the rows, recover counts per topic; none writes

	Replay     ReplayFlags     // the flags of replay beyond run's
	Prune      PruneFlags      // the flags of prune beyond run's
	Recover    RecoverFlags    // the flags of recover beyond run's
	Checkpoint CheckpointFlags // the flags of checkpoint set and reset beyond run's
	Schema     SchemaFlags     // the flags of schema beyond --preset

	sec       *security     // set by ValidateConnection
	contracts *contract.Set // --contracts-dir compiled, set by Validate
}

// ReplayFlags are the flags of `binlog-router replay` beyond run's.
type ReplayFlags struct {
	FromGTID        OptionalString // --from-gtid: start after this GTID set ("" = the oldest binlog)
	FromTime        OptionalTime   // --from-time: skip transactions committed before this time
	ToGTID          OptionalString // --to-gtid: end after the last transaction in this set
	ToTime          OptionalTime   // --to-time: end at the first transaction committed after this time
	TopicPrefix     string         // --topic-prefix: prepended to every topic
	TransactionalID string         // --transactional-id; "" is binlog-router-replay-<name>-<random>
	ServerID        uint           // --replay-server-id; 0 is a random id
}

// PruneFlags are the flags of `binlog-router prune`, and of run's
// --prune-interval (ValidatePrune checks them).
type PruneFlags struct {
	OlderThan         Age           // --older-than: the age of the rows deleted
	MySQLUser         string        // --prune-mysql-user: SELECT and DELETE on the outbox tables
	MySQLPassword     string        // --prune-mysql-password (prefer the env variable or the file)
	MySQLPasswordFile string        // --prune-mysql-password-file
	Margin            time.Duration // --prune-margin: kept before the moment the checkpoint covers
	CheckpointWait    time.Duration // --prune-checkpoint-wait
	Batch             int           // --prune-batch: rows per DELETE
	Pause             time.Duration // --prune-pause: after each batch
	Rate              int           // --prune-rate: rows per second at most
	Interval          time.Duration // --prune-interval: run prunes this often (0: never)
}

// RecoverFlags are the flags of `binlog-router recover` beyond run's
// (ValidateRecover checks them).
type RecoverFlags struct {
	Since           OptionalTime  // --since: rows created at or after this time
	SinceCheckpoint bool          // --since-checkpoint: rows created after the checkpoint's time less the margin
	Where           string        // --where: rows for which this SQL condition holds
	Margin          time.Duration // --recover-margin
	Chunk           int           // --recover-chunk: rows per query
	Order           string        // --recover-order: auto, key or created-at
	MaxKnownIDs     int           // --max-known-ids: cap of the published ids held
	Rate            int           // --recover-rate: rows read per second at most (0: no cap)
}

// CheckpointFlags are the flags of `binlog-router checkpoint show`, `set`
// and `reset` beyond run's.
type CheckpointFlags struct {
	GTID             OptionalString // --gtid: the GTID set to store (set)
	DebeziumOffset   OptionalString // --from-debezium-offset: store the position of this offset (set)
	Force            bool           // --force: skip the check that the router is not running
	AsDebeziumOffset bool           // --as-debezium-offset: print the checkpoint as a Debezium offset (show)
}

// SchemaFlags are the flags of `binlog-router schema` beyond --preset.
type SchemaFlags struct {
	Flavor string // --flavor mysql|mariadb
	Table  string // --table: table name, optionally db.table
}

// Tables returns the parsed outbox tables; call after Validate.
func (c *Config) Tables() []schema.TableName {
	out := make([]schema.TableName, 0, len(c.OutboxTables))
	for _, t := range c.OutboxTables {
		if n, err := schema.ParseTableName(t); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// datetimeZone is --datetime-zone; nil when not set (the server's).
func (c *Config) datetimeZone() (*time.Location, error) {
	if c.DatetimeZone == "" {
		return nil, nil
	}
	loc, err := binlog.ParseZone(c.DatetimeZone)
	if err != nil {
		return nil, fmt.Errorf("--datetime-zone: %w", err)
	}
	return loc, nil
}

// RouteConfig is the record-building part: the contracts are those
// Validate compiled, so call it after Validate (before, --contracts-dir
// is not checked).
func (c *Config) RouteConfig() route.Config {
	return route.Config{TopicTemplate: c.TopicTemplate, ValidateJSON: c.ValidateJSON, RequireUUID: c.RequireUUID,
		Envelope: route.Envelope(c.Envelope), CloudEventsSource: c.CloudEventsSource, Contracts: c.contracts}
}

// Contracts are the contracts of --contracts-dir, compiled by Validate;
// nil when --contracts-dir is empty or before Validate.
func (c *Config) Contracts() *contract.Set { return c.contracts }

// loadContracts compiles --contracts-dir into c.contracts.
func (c *Config) loadContracts() error {
	c.contracts = nil
	if p := contract.MissingPolicy(c.ContractsMissing); p != contract.MissingAllow && p != contract.MissingFail {
		return nil // the bounds table reports it
	}
	s, err := contract.Load(c.ContractsDir, contract.MissingPolicy(c.ContractsMissing))
	c.contracts = s
	return err
}

func mergeColumns(base, override schema.Columns) schema.Columns {
	pick := func(b, o string) string {
		if o != "" {
			return o
		}
		return b
	}
	return schema.Columns{
		EventID:       pick(base.EventID, override.EventID),
		AggregateType: pick(base.AggregateType, override.AggregateType),
		AggregateID:   pick(base.AggregateID, override.AggregateID),
		EventType:     pick(base.EventType, override.EventType),
		Payload:       pick(base.Payload, override.Payload),
		CreatedAt:     pick(base.CreatedAt, override.CreatedAt),
		SchemaVersion: pick(base.SchemaVersion, override.SchemaVersion),
		Traceparent:   pick(base.Traceparent, override.Traceparent),
		Headers:       pick(base.Headers, override.Headers),
	}
}

package config

import (
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/contract"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/prune"
	"github.com/binlog-router/binlog-router/internal/recovery"
	"github.com/binlog-router/binlog-router/internal/relay"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Adding a flag:
//
//  1. Its destination: a field of Config (config.go) whose comment names
//     the flag; or a field of a component's struct that Config embeds
//     (pipeline.Cadence, pipeline.ProducerLimits), which reaches the component
//     as it is.
//  2. Its default, written once: when a component takes the setting, a
//     Default constant beside the component's field
//     (pipeline.DefaultCommitRecords), which the component's zero-value
//     fallback (setDefaults or WithDefaults) takes too; else the literal in its entry.
//  3. One entry in flagTable: the commands (Router for a flag of run),
//     name, default, usage and destination. The command line, -h, the
//     BINLOG_ROUTER_* variable and the config-file key follow from it.
//  4. If some values are wrong, a row of the bounds table (validate.go).
//  5. Its hand-over: a line of build.go from the Config field to the
//     component's (none for a field of an embedded struct), or the
//     command of cmd/binlog-router that reads it.
//  6. A row of a flag table of the docs with the same default: a test of
//     this package compares them with flagTable.

// flagTable is every flag of every command, written once: name,
// commands, default, usage and destination. Register, ApplyEnv and the
// config file take the flags from it, Default its defaults, and
// TestFlagTablesMatchDocs checks it against the flag tables of docs/.
// A new flag follows "Adding a flag" above.
var flagTable = []flagSpec{
	// Where the source and the brokers are, and which router this is.
	flagOf(Router, "mysql-addr", "127.0.0.1:3306", "MySQL/MariaDB host:port", func(c *Config) *string { return &c.MySQLAddr }),
	flagOf(Router, "mysql-user", "root", "replication user", func(c *Config) *string { return &c.MySQLUser }),
	flagOf(Router, "mysql-password", "", "password (prefer env "+EnvName("mysql-password")+" or --mysql-password-file)", func(c *Config) *string { return &c.MySQLPassword }),
	flagOf(Router, "mysql-password-file", "", "read the MySQL password from this file", func(c *Config) *string { return &c.MySQLPasswordFile }),
	flagOf(Router, "kafka-brokers", []string{"127.0.0.1:9092"}, "Kafka bootstrap brokers, comma separated", func(c *Config) *[]string { return &c.KafkaBrokers }),
	flagOf(Router, "name", relay.DefaultName, "router name: checkpoint key and Kafka transactional id", func(c *Config) *string { return &c.Name }),
	flagOf(Router, "checkpoint-topic", checkpoint.DefaultTopic, "compacted topic holding checkpoints", func(c *Config) *string { return &c.CheckpointTopic }).ignoredBy(CmdReplay),
	flagOf(Router, "log-format", string(logging.JSON), "log format: json or console", func(c *Config) *string { return &c.LogFormat }),
	flagOf(Router, "log-level", "info", "log level: debug, info, warn, error", func(c *Config) *string { return &c.LogLevel }),
	flagOf(Router, configFlag, "", "YAML (.yaml, .yml) or TOML (.toml) file of flag-name keys and values; flags and "+EnvPrefix+"* variables override it", func(c *Config) *string { return &c.ConfigFile }),

	// The outbox tables and their rows.
	flagOf(Router, "server-id", uint(binlog.DefaultServerID), "replica server id, unique among the source's replicas", func(c *Config) *uint { return &c.ServerID }).ignoredBy(CmdReplay),
	flagOf(Router, "outbox-table", []string(nil), "outbox table db.table (repeatable)", func(c *Config) *[]string { return &c.OutboxTables }),
	flagOf(Router, "allow-missing-table", false, "start although an outbox table does not exist yet (it is created later); the router still stops if a table with a close name appears", func(c *Config) *bool { return &c.AllowMissingTable }).ignoredBy(CmdReplay),
	flagOf(Router|CmdSchema, "preset", schema.PresetDefault, "outbox column preset: default or debezium", func(c *Config) *string { return &c.Preset }),
	flagOf(Router, "column-event-id", "", "event id column (overrides the preset)", func(c *Config) *string { return &c.Columns.EventID }).documented(fromPreset),
	flagOf(Router, "column-aggregate-type", "", "aggregate type column", func(c *Config) *string { return &c.Columns.AggregateType }).documented(fromPreset),
	flagOf(Router, "column-aggregate-id", "", "aggregate id column (the Kafka key)", func(c *Config) *string { return &c.Columns.AggregateID }).documented(fromPreset),
	flagOf(Router, "column-event-type", "", "event type column", func(c *Config) *string { return &c.Columns.EventType }).documented(fromPreset),
	flagOf(Router, "column-payload", "", "payload column (the Kafka value)", func(c *Config) *string { return &c.Columns.Payload }).documented(fromPreset),
	flagOf(Router, "column-created-at", "", "creation time column (the record timestamp)", func(c *Config) *string { return &c.Columns.CreatedAt }).documented(fromPreset),
	flagOf(Router, "column-schema-version", "", "schema version column", func(c *Config) *string { return &c.Columns.SchemaVersion }).documented(fromPreset),
	flagOf(Router, "column-traceparent", "", "W3C traceparent column", func(c *Config) *string { return &c.Columns.Traceparent }).documented(fromPreset),
	flagOf(Router, "column-headers", "", "JSON object column of extra headers", func(c *Config) *string { return &c.Columns.Headers }).documented(fromPreset),
	flagOf(Router, "on-update", string(binlog.DefaultOnUpdate), "UPDATE of an outbox row: warn or fail", func(c *Config) *string { return &c.OnUpdate }),
	flagOf(Router, "on-invalid", string(pipeline.DefaultOnInvalid), "outbox row that cannot be routed: fail (stop) or dead-letter", func(c *Config) *string { return &c.OnInvalid }),
	flagOf(Router, "on-partition-change", string(kafka.DefaultPartitionPolicy), "a topic the router writes to changed its partition count: warn (go on with the new count) or fail (stop before the first record placed by it)", func(c *Config) *string { return &c.OnPartitionChange }).ignoredBy(CmdReplay),
	flagOf(Router, "dead-letter-topic", pipeline.DefaultDeadLetterTopic, "topic for rows that cannot be routed (with --on-invalid=dead-letter)", func(c *Config) *string { return &c.DeadLetterTopic }),

	// The records.
	flagOf(Router, "topic-template", "", "topic template; placeholders {event_type} {aggregate_type} {database} {table} (default "+route.DefaultTopicTemplate+"; debezium preset "+schema.DebeziumTopicTemplate+")", func(c *Config) *string { return &c.TopicTemplate }).documented(route.DefaultTopicTemplate),
	flagOf(Router, "validate-json", route.DefaultConfig().ValidateJSON, "reject payloads that are not valid JSON", func(c *Config) *bool { return &c.ValidateJSON }),
	flagOf(Router, "envelope", string(route.DefaultEnvelope), "record envelope: plain, cloudevents (CloudEvents binary content mode) or cloudevents-structured (application/cloudevents+json)", func(c *Config) *string { return &c.Envelope }),
	flagOf(Router, "cloudevents-source", "", "CloudEvents source attribute, a URI reference; placeholders {database} {table} (default "+route.DefaultCloudEventsSource+")", func(c *Config) *string { return &c.CloudEventsSource }).documented(route.DefaultCloudEventsSource),
	flagOf(Router, "contracts-dir", "", "directory of JSON Schema contracts, <event_type>.json or <event_type>.v<N>.json; each payload is checked against its event type's before produce (\"\" = no check)", func(c *Config) *string { return &c.ContractsDir }),
	flagOf(Router, "contracts-missing", string(contract.DefaultMissing), "event type with no contract in --contracts-dir: allow (route it unchecked) or fail (a row error)", func(c *Config) *string { return &c.ContractsMissing }),
	flagOf(Router, "require-uuid", route.DefaultConfig().RequireUUID, "reject event ids that are not UUIDs", func(c *Config) *bool { return &c.RequireUUID }),
	flagOf(Router, "uuid-binary-layout", string(binlog.DefaultUUIDBinary), "how a 16-byte binary event id (BINARY(16), VARBINARY) holds a UUID: standard (UUID_TO_BIN(x), UNHEX) or swapped (MySQL's UUID_TO_BIN(x, 1)); MariaDB's UUID type is always read as it is", func(c *Config) *string { return &c.UUIDBinaryLayout }),
	flagOf(Router, "datetime-zone", "", "time zone of a DATETIME created_at column: an IANA name (Europe/Berlin), UTC or an offset (+05:00); default the server's time_zone", func(c *Config) *string { return &c.DatetimeZone }),
	flagOf(Router, "auto-create-topics", relay.DefaultAutoCreateTopics, "let the brokers create missing topics (if they allow it)", func(c *Config) *bool { return &c.AutoCreateTopics }),
	flagOf(Router, "compression", defaultCompression, "record batch compression: none, snappy, lz4, zstd or gzip", func(c *Config) *string { return &c.Compression }),

	// Delivery, commits and the pipeline's bounds.
	flagOf(Router, "start", relay.DefaultStart, "start without a checkpoint: earliest, latest or gtid:<set>", func(c *Config) *string { return &c.Start }).ignoredBy(CmdReplay),
	flagOf(Router, "delivery", string(relay.DefaultDelivery), "exactly-once or at-least-once", func(c *Config) *string { return &c.Delivery }).ignoredBy(CmdReplay),
	flagOf(Router, "commit-records", pipeline.DefaultCommitRecords, "commit a Kafka transaction after this many records", func(c *Config) *int { return &c.CommitRecords }),
	flagOf(Router, "commit-interval", pipeline.DefaultCommitInterval, "commit a Kafka transaction after this long", func(c *Config) *time.Duration { return &c.CommitInterval }).ignoredBy(CmdReplay),
	flagOf(Router, "commit-linger", pipeline.DefaultCommitLinger, "least time between two commits made because the binlog had nothing more (negative: none)", func(c *Config) *time.Duration { return &c.CommitLinger }).ignoredBy(CmdReplay),
	flagOf(Router, "idle-checkpoint", pipeline.DefaultIdleCheckpoint, "advance the checkpoint over non-outbox transactions this often", func(c *Config) *time.Duration { return &c.IdleCheckpoint }).ignoredBy(CmdReplay),
	flagOf(Router, "event-cache", binlog.DefaultEventCache, "binlog events buffered between network and decoding", func(c *Config) *int { return &c.EventCache }),
	flagOf(Router, "max-buffered-records", pipeline.DefaultMaxBufferedRecords, "Kafka producer buffer, records", func(c *Config) *int { return &c.MaxBufferedRecords }),
	flagOf(Router, "max-buffered-bytes", pipeline.DefaultMaxBufferedBytes, "Kafka producer buffer, bytes", func(c *Config) *int { return &c.MaxBufferedBytes }),
	flagOf(Router, "max-message-bytes", pipeline.DefaultMaxMessageBytes, "largest record batch sent; a topic whose max.message.bytes (or the brokers' message.max.bytes) is smaller gets smaller batches", func(c *Config) *int { return &c.MaxMessageBytes }),
	flagOf(Router, "memory-limit", int64(72<<20), "soft memory limit of the Go runtime in bytes (env GOMEMLIMIT wins); with it the garbage collector runs less often (GOGC=400 unless GOGC is set)", func(c *Config) *int64 { return &c.MemoryLimit }).ignoredBy(CmdReplay),
	flagOf(Router, "kafka-timeout", pipeline.DefaultKafkaTimeout, "stop with an error when Kafka cannot take a record, flush or commit for this long", func(c *Config) *time.Duration { return &c.KafkaTimeout }).ignoredBy(CmdReplay),
	flagOf(Router, "transaction-timeout", pipeline.DefaultTransactionTimeout, "Kafka transaction timeout", func(c *Config) *time.Duration { return &c.TransactionTimeout }),
	flagOf(Router, "kafka-transactions", relay.DefaultKafkaTransactions, "exactly-once: Kafka transactional ids used in turn (binlog-router-<name>, then #2 ...), so that a transaction produces while the one before is still being completed", func(c *Config) *int { return &c.KafkaTransactions }),
	flagOf(Router, "shutdown-timeout", relay.DefaultShutdownTimeout, "on SIGTERM, time allowed to finish and commit", func(c *Config) *time.Duration { return &c.ShutdownTimeout }).ignoredBy(CmdReplay),

	// Operations.
	flagOf(Router, "metrics-addr", "", "serve Prometheus /metrics, /healthz and /readyz on this address (e.g. :9090)", func(c *Config) *string { return &c.MetricsAddr }).ignoredBy(CmdReplay),
	flagOf(Router, "ha", false, "high availability: routers with the same --name elect one active instance through Kafka", func(c *Config) *bool { return &c.HA }).ignoredBy(CmdReplay),
	flagOf(Router, "ha-session-timeout", relay.DefaultHATimeout, "with --ha, a standby takes over after the active router is silent this long", func(c *Config) *time.Duration { return &c.HATimeout }).ignoredBy(CmdReplay),

	// TLS to MySQL/MariaDB (security.go).
	flagOf(Router, "mysql-tls", MySQLTLSDisabled, "TLS to MySQL/MariaDB, like the mysql client's --ssl-mode: disabled, required (encrypted, server not verified), verify-ca (server certificate signed by --mysql-tls-ca) or verify-identity (signed and naming the server)", func(c *Config) *string { return &c.MySQLTLSMode }),
	flagOf(Router, "mysql-tls-ca", "", "PEM file of the CA certificates that sign the MySQL server certificate (verify-ca, verify-identity; default for verify-identity: the system roots)", func(c *Config) *string { return &c.MySQLTLSCA }),
	flagOf(Router, "mysql-tls-cert", "", "PEM client certificate presented to MySQL (with --mysql-tls-key)", func(c *Config) *string { return &c.MySQLTLSCert }),
	flagOf(Router, "mysql-tls-key", "", "PEM private key of --mysql-tls-cert", func(c *Config) *string { return &c.MySQLTLSKey }),
	flagOf(Router, "mysql-tls-server-name", "", "with --mysql-tls=verify-identity, the name the server certificate must carry (default: the host of --mysql-addr)", func(c *Config) *string { return &c.MySQLTLSServerName }),

	// TLS and SASL to Kafka (security.go).
	flagOf(Router, "kafka-tls", false, "connect to the Kafka brokers over TLS, verifying their certificates", func(c *Config) *bool { return &c.KafkaTLS }),
	flagOf(Router, "kafka-tls-ca", "", "PEM file of the CA certificates that sign the brokers' certificates (default: the system roots)", func(c *Config) *string { return &c.KafkaTLSCA }),
	flagOf(Router, "kafka-tls-cert", "", "PEM client certificate presented to the brokers (with --kafka-tls-key)", func(c *Config) *string { return &c.KafkaTLSCert }),
	flagOf(Router, "kafka-tls-key", "", "PEM private key of --kafka-tls-cert", func(c *Config) *string { return &c.KafkaTLSKey }),
	flagOf(Router, "kafka-tls-server-name", "", "name every broker certificate must carry (default: the host of each broker address)", func(c *Config) *string { return &c.KafkaTLSServerName }),
	flagOf(Router, "kafka-tls-insecure-skip-verify", false, "DANGEROUS: do not verify the brokers' certificates; anyone on the network path can then impersonate the brokers and read the records and the SASL password. For tests only", func(c *Config) *bool { return &c.KafkaTLSInsecureSkipVerify }),
	flagOf(Router, "kafka-sasl-mechanism", "", "SASL authentication to Kafka: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (default: none)", func(c *Config) *string { return &c.KafkaSASLMechanism }),
	flagOf(Router, "kafka-sasl-user", "", "SASL user name", func(c *Config) *string { return &c.KafkaSASLUser }),
	flagOf(Router, "kafka-sasl-password", "", "SASL password (prefer env "+EnvName("kafka-sasl-password")+" or --kafka-sasl-password-file)", func(c *Config) *string { return &c.KafkaSASLPassword }),
	flagOf(Router, "kafka-sasl-password-file", "", "read the SASL password from this file", func(c *Config) *string { return &c.KafkaSASLPasswordFile }),

	// replay: the range and where it goes.
	valueOf(CmdReplay, "from-gtid", "start after the transactions in this GTID set (\"\" = the oldest binlog)", func(c *Config) *OptionalString { return &c.Replay.FromGTID }),
	valueOf(CmdReplay, "from-time", "skip transactions committed before this time (RFC3339)", func(c *Config) *OptionalTime { return &c.Replay.FromTime }),
	valueOf(CmdReplay, "to-gtid", "end after the last transaction contained in this GTID set", func(c *Config) *OptionalString { return &c.Replay.ToGTID }),
	valueOf(CmdReplay, "to-time", "end at the first transaction committed after this time (RFC3339)", func(c *Config) *OptionalTime { return &c.Replay.ToTime }),
	flagOf(CmdReplay, "topic-prefix", "", "prepend this to every topic", func(c *Config) *string { return &c.Replay.TopicPrefix }),
	flagOf(CmdReplay|CmdPrune|CmdRecover, "dry-run", false, "replay: print one JSON line per record on stdout, produce nothing; prune: count the rows it would delete, delete nothing; recover: count per topic, publish nothing", func(c *Config) *bool { return &c.DryRun }),
	flagOf(CmdReplay, "transactional-id", "", "Kafka transactional id of the replay (default binlog-router-replay-<name>-<random>)", func(c *Config) *string { return &c.Replay.TransactionalID }),
	flagOf(CmdReplay, "replay-server-id", uint(0), "replica server id of the replay's binlog connection (default random in 2^31..2^32-2); not the router's --server-id", func(c *Config) *uint { return &c.Replay.ServerID }),

	// recover: which rows, and how many published ids it may hold
	valueOf(CmdRecover, "since", "recover the rows created at or after this time (RFC3339)", func(c *Config) *OptionalTime { return &c.Recover.Since }),
	flagOf(CmdRecover, "since-checkpoint", false, "recover the rows created after the time the router's stored checkpoint was written, less --recover-margin", func(c *Config) *bool { return &c.Recover.SinceCheckpoint }),
	flagOf(CmdRecover, "where", "", "recover the rows for which this SQL condition holds (e.g. \"status <> 'SENT'\"); with --since, both", func(c *Config) *string { return &c.Recover.Where }),
	flagOf(CmdRecover, "recover-margin", recovery.DefaultMargin, "read the outbox topics for published ids from this long before the window's start; --since-checkpoint starts this long before the checkpoint's time", func(c *Config) *time.Duration { return &c.Recover.Margin }),
	flagOf(CmdRecover, "recover-chunk", recovery.DefaultChunk, "rows read per query", func(c *Config) *int { return &c.Recover.Chunk }),
	flagOf(CmdRecover, "recover-order", string(recovery.DefaultOrder), "order rows are read and published in: auto (key if the primary key is AUTO_INCREMENT, else created-at if --column-created-at is mapped, else key with a warning), key, or created-at", func(c *Config) *string { return &c.Recover.Order }),
	flagOf(CmdRecover, "recover-rate", 0, "read at most this many rows per second (0: no cap)", func(c *Config) *int { return &c.Recover.Rate }),
	flagOf(CmdRecover, "max-known-ids", recovery.DefaultMaxKnownIDs, "stop if the outbox topics hold more published ids than this in the window (16 bytes of memory each for UUID ids)", func(c *Config) *int { return &c.Recover.MaxKnownIDs }),

	// prune, and run with --prune-interval: which rows, as whom, how fast
	// (docs/retention.md).
	flagOf(Router, "prune-interval", time.Duration(0), "prune inside the router this often, with the prune flags (0: never; docs/retention.md)", func(c *Config) *time.Duration { return &c.Prune.Interval }).ignoredBy(notPruning | CmdPrune),
	valueOf(Router, "older-than", "delete the published rows created longer ago than this: 7d, 36h, 1d12h (required by prune and --prune-interval)", func(c *Config) *Age { return &c.Prune.OlderThan }).ignoredBy(notPruning),
	flagOf(Router, "prune-mysql-user", "", "MySQL/MariaDB user of prune, with SELECT and DELETE on the outbox tables only (required by prune and --prune-interval; --mysql-user stays read-only)", func(c *Config) *string { return &c.Prune.MySQLUser }).ignoredBy(notPruning),
	flagOf(Router, "prune-mysql-password", "", "its password (prefer env "+EnvName("prune-mysql-password")+" or --prune-mysql-password-file)", func(c *Config) *string { return &c.Prune.MySQLPassword }).ignoredBy(notPruning),
	flagOf(Router, "prune-mysql-password-file", "", "read the prune user's password from this file", func(c *Config) *string { return &c.Prune.MySQLPasswordFile }).ignoredBy(notPruning),
	flagOf(Router, "prune-margin", prune.DefaultMargin, "keep the rows created less than this before the last moment the router's checkpoint covers (longer than any transaction that inserts outbox rows)", func(c *Config) *time.Duration { return &c.Prune.Margin }).ignoredBy(notPruning),
	flagOf(Router, "prune-checkpoint-wait", prune.DefaultCheckpointWait, "wait this long for the router's checkpoint to cover what the server has committed; then refuse", func(c *Config) *time.Duration { return &c.Prune.CheckpointWait }).ignoredBy(notPruning),
	flagOf(Router, "prune-batch", prune.DefaultBatch, "rows deleted per DELETE statement (each its own transaction)", func(c *Config) *int { return &c.Prune.Batch }).ignoredBy(notPruning),
	flagOf(Router, "prune-pause", prune.DefaultPause, "pause after each batch", func(c *Config) *time.Duration { return &c.Prune.Pause }).ignoredBy(notPruning),
	flagOf(Router, "prune-rate", prune.DefaultRate, "delete at most this many rows per second", func(c *Config) *int { return &c.Prune.Rate }).ignoredBy(notPruning),

	// checkpoint show, set and reset.
	flagOf(CmdCheckpointShow, "as-debezium-offset", false, "print the checkpoint as a Debezium MySQL/MariaDB connector offset (for PATCH /connectors/NAME/offsets)", func(c *Config) *bool { return &c.Checkpoint.AsDebeziumOffset }),
	valueOf(CmdCheckpointSet, "gtid", "GTID set to store, in the source server's syntax", func(c *Config) *OptionalString { return &c.Checkpoint.GTID }),
	valueOf(CmdCheckpointSet, "from-debezium-offset", "store the position of this Debezium connector offset (JSON, as the offsets topic or Kafka Connect's REST API shows it)", func(c *Config) *OptionalString { return &c.Checkpoint.DebeziumOffset }),
	flagOf(CmdCheckpointSet|CmdCheckpointReset|CmdRecover, "force", false, "skip the check that no router of this name is running", func(c *Config) *bool { return &c.Checkpoint.Force }),

	// schema (and --preset above).
	flagOf(CmdSchema, "flavor", "mysql", "mysql or mariadb", func(c *Config) *string { return &c.Schema.Flavor }),
	flagOf(CmdSchema, "table", "outbox", "table name, optionally db.table", func(c *Config) *string { return &c.Schema.Table }),
}

// notPruning are the commands that take the prune flags only as flags of
// run.
const notPruning = CmdValidate | CmdReplay | CmdCheckpoint | CmdRecover

// fromPreset is the documented default of the --column-* flags: "" takes
// the preset's column.
const fromPreset = "from preset"

package config

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// EnvPrefix prefixes the environment variable of every flag.
const EnvPrefix = "BINLOG_ROUTER_"

// EnvName is the environment variable read for a flag name.
func EnvName(flagName string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// listFlag is a repeatable, comma-separable string list. The first use on
// the command line replaces the default.
type listFlag struct {
	dst *[]string
	set bool
}

func (l *listFlag) String() string {
	if l.dst == nil {
		return ""
	}
	return strings.Join(*l.dst, ",")
}

func (l *listFlag) Set(v string) error {
	if !l.set {
		*l.dst, l.set = nil, true
	}
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l.dst = append(*l.dst, p)
		}
	}
	return nil
}

// RegisterConnection registers the flags that say how to reach MySQL and
// Kafka and which router this is (shared by every subcommand that
// connects).
func (c *Config) RegisterConnection(fs *flag.FlagSet) {
	fs.StringVar(&c.MySQLAddr, "mysql-addr", c.MySQLAddr, "MySQL/MariaDB host:port")
	fs.StringVar(&c.MySQLUser, "mysql-user", c.MySQLUser, "replication user")
	fs.StringVar(&c.MySQLPassword, "mysql-password", c.MySQLPassword, "password (prefer env "+EnvName("mysql-password")+" or --mysql-password-file)")
	fs.StringVar(&c.MySQLPasswordFile, "mysql-password-file", c.MySQLPasswordFile, "read the MySQL password from this file")
	fs.Var(&listFlag{dst: &c.KafkaBrokers}, "kafka-brokers", "Kafka bootstrap brokers, comma separated")
	fs.StringVar(&c.Name, "name", c.Name, "router name: checkpoint key and Kafka transactional id")
	fs.StringVar(&c.CheckpointTopic, "checkpoint-topic", c.CheckpointTopic, "compacted topic holding checkpoints")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: json or console")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn, error")
	c.registerConfigFile(fs)
	c.registerSecurity(fs)
}

// RegisterRun registers every flag of `binlog-router run`.
func (c *Config) RegisterRun(fs *flag.FlagSet) {
	c.RegisterConnection(fs)
	fs.UintVar(&c.ServerID, "server-id", c.ServerID, "replica server id, unique among the source's replicas")
	fs.Var(&listFlag{dst: &c.OutboxTables}, "outbox-table", "outbox table db.table (repeatable)")
	fs.BoolVar(&c.AllowMissingTable, "allow-missing-table", c.AllowMissingTable, "start although an outbox table does not exist yet (it is created later); the router still stops if a table with a close name appears")
	fs.StringVar(&c.Preset, "preset", c.Preset, "outbox column preset: default or debezium")
	fs.StringVar(&c.Columns.EventID, "column-event-id", "", "event id column (overrides the preset)")
	fs.StringVar(&c.Columns.AggregateType, "column-aggregate-type", "", "aggregate type column")
	fs.StringVar(&c.Columns.AggregateID, "column-aggregate-id", "", "aggregate id column (the Kafka key)")
	fs.StringVar(&c.Columns.EventType, "column-event-type", "", "event type column")
	fs.StringVar(&c.Columns.Payload, "column-payload", "", "payload column (the Kafka value)")
	fs.StringVar(&c.Columns.CreatedAt, "column-created-at", "", "creation time column (the record timestamp)")
	fs.StringVar(&c.Columns.SchemaVersion, "column-schema-version", "", "schema version column")
	fs.StringVar(&c.Columns.Traceparent, "column-traceparent", "", "W3C traceparent column")
	fs.StringVar(&c.Columns.Headers, "column-headers", "", "JSON object column of extra headers")
	fs.StringVar(&c.OnUpdate, "on-update", c.OnUpdate, "UPDATE of an outbox row: warn or fail")
	fs.StringVar(&c.OnInvalid, "on-invalid", c.OnInvalid, "outbox row that cannot be routed: fail (stop) or dead-letter")
	fs.StringVar(&c.DeadLetterTopic, "dead-letter-topic", c.DeadLetterTopic, "topic for rows that cannot be routed (with --on-invalid=dead-letter)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "serve Prometheus /metrics, /healthz and /readyz on this address (e.g. :9090)")
	fs.BoolVar(&c.HA, "ha", c.HA, "high availability: routers with the same --name elect one active instance through Kafka")
	fs.DurationVar(&c.HATimeout, "ha-session-timeout", c.HATimeout, "with --ha, a standby takes over after the active router is silent this long")
	fs.StringVar(&c.TopicTemplate, "topic-template", c.TopicTemplate, "topic template; placeholders {event_type} {aggregate_type} {database} {table} (default outbox.event.{event_type}; debezium preset outbox.event.{aggregate_type})")
	fs.BoolVar(&c.ValidateJSON, "validate-json", c.ValidateJSON, "reject payloads that are not valid JSON")
	fs.BoolVar(&c.RequireUUID, "require-uuid", c.RequireUUID, "reject event ids that are not UUIDs")
	fs.BoolVar(&c.AutoCreateTopics, "auto-create-topics", c.AutoCreateTopics, "let the brokers create missing topics (if they allow it)")
	fs.StringVar(&c.Start, "start", c.Start, "start without a checkpoint: earliest, latest or gtid:<set>")
	fs.StringVar(&c.Delivery, "delivery", c.Delivery, "exactly-once or at-least-once")
	fs.IntVar(&c.CommitRecords, "commit-records", c.CommitRecords, "commit a Kafka transaction after this many records")
	fs.DurationVar(&c.CommitInterval, "commit-interval", c.CommitInterval, "commit a Kafka transaction after this long")
	fs.DurationVar(&c.IdleCheckpoint, "idle-checkpoint", c.IdleCheckpoint, "advance the checkpoint over non-outbox transactions this often")
	fs.IntVar(&c.EventCache, "event-cache", c.EventCache, "binlog events buffered between network and decoding")
	fs.IntVar(&c.MaxBufferedRecords, "max-buffered-records", c.MaxBufferedRecords, "Kafka producer buffer, records")
	fs.IntVar(&c.MaxBufferedBytes, "max-buffered-bytes", c.MaxBufferedBytes, "Kafka producer buffer, bytes")
	fs.IntVar(&c.MaxMessageBytes, "max-message-bytes", c.MaxMessageBytes, "largest record batch sent; at most the brokers' message.max.bytes")
	fs.StringVar(&c.Compression, "compression", c.Compression, "record batch compression: none, snappy, lz4, zstd or gzip")
	fs.Int64Var(&c.MemoryLimit, "memory-limit", c.MemoryLimit, "soft memory limit of the Go runtime in bytes (env GOMEMLIMIT wins); with it the garbage collector runs less often (GOGC=400 unless GOGC is set)")
	fs.DurationVar(&c.KafkaTimeout, "kafka-timeout", c.KafkaTimeout, "stop with an error when Kafka cannot take a record, flush or commit for this long")
	fs.DurationVar(&c.TransactionTimeout, "transaction-timeout", c.TransactionTimeout, "Kafka transaction timeout")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "on SIGTERM, time allowed to finish and commit")
}

// ApplyEnv sets every flag not given on the command line from its
// environment variable, if set.
func ApplyEnv(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		if v, ok := os.LookupEnv(EnvName(f.Name)); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", EnvName(f.Name), v, e)
			}
		}
	})
	return err
}

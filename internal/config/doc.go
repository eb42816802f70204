// Package config is the router's one configuration struct, filled from
// command-line flags, BINLOG_ROUTER_* environment variables and an optional
// YAML or TOML file, validated once, and turned into each component's own
// config.
//
// # Sources and precedence
//
// Load parses the command line, then sets every flag not given there from
// its environment variable (--some-name is read from
// BINLOG_ROUTER_SOME_NAME), then every flag still unset from the file named
// by --config or BINLOG_ROUTER_CONFIG; the rest keep their defaults. So a
// flag beats env, env beats the file, the file beats the default.
//
// The file is YAML (*.yaml, *.yml) or TOML (*.toml). Its keys are the flag
// names without dashes in front; lists are allowed for the list flags;
// durations are strings:
//
//	mysql-addr: db.internal:3306
//	outbox-table: [shop.outbox, billing.outbox]
//	kafka-brokers: [k1:9092, k2:9092]
//	commit-interval: 100ms
//	mysql-tls: verify-identity
//	mysql-tls-ca: /etc/binlog-router/mysql-ca.pem
//
// An unknown key is an error naming the key, the file and the closest flag
// name. Every command that reads a file (run, validate, replay, checkpoint)
// takes every flag of `binlog-router run`, so one file serves them all; a
// key of run that a command lacks would be checked but not applied.
//
// # The flag table
//
// Every flag of every command is one entry of flagTable (flagtable.go):
// its name (which is also its file key and, through EnvName, its
// environment variable), default, usage, destination field in Config and
// the commands that take it. Register registers a command's flags from
// it, Default builds the defaults from it, and TestFlagTablesMatchDocs
// checks it against the flag tables of docs/. Replay takes the flags of
// the live pipeline (--start, --ha, ...) only so that the router's command
// line can be reused; its -h marks them as ignored.
//
// # Defaults, validation and the components' configs
//
// Each default is defined once: a component's Default constant
// (pipeline.DefaultCommitRecords, binlog.DefaultEventCache, ...) when the
// component has the setting, which the flag table and the component's own
// zero-value fallback both take; otherwise the literal in the flag table.
// Validate checks the flags against one table of bounds (validate.go):
// each row a flag, its value, what is allowed and the error, which names
// the flag and the fix. build.go turns the Config into each component's
// config (ReaderConfig, RelayConfig, ReplayConfig, ValidateConfig). The
// commit cadence (pipeline.Cadence) and the producer bounds
// (pipeline.ProducerLimits) are the loop's own structs, embedded in Config
// and handed over whole.
//
// # Secrets
//
// Secrets never need to be on the command line, where other local users
// can read them: set BINLOG_ROUTER_MYSQL_PASSWORD and
// BINLOG_ROUTER_KAFKA_SASL_PASSWORD, or point --mysql-password-file and
// --kafka-sasl-password-file at files (one trailing line end is dropped).
// Setting both a password and its file is an error.
//
// # TLS to MySQL/MariaDB
//
// --mysql-tls takes the mysql client's --ssl-mode names and applies to the
// SQL and the replication connection alike:
//
//   - disabled (default): plain TCP.
//   - required: encrypted, the server certificate is not verified
//     (eavesdroppers see nothing, but anyone on the path can impersonate
//     the server and read the password exchange); logged as a warning.
//   - verify-ca: also verifies that --mysql-tls-ca signed the server
//     certificate, but not the name in it.
//   - verify-identity: also verifies the name: --mysql-tls-server-name,
//     default the host of --mysql-addr (an IP address must be in the
//     certificate's IP SANs). Without --mysql-tls-ca, the system roots.
//     Use this one.
//
// The mysql client's "preferred" is refused: it falls back to plain TCP
// whenever the server, or an attacker, says TLS is unavailable.
// --mysql-tls-cert and --mysql-tls-key present a client certificate (for
// users created with REQUIRE X509). Contradictory settings (a CA with
// disabled or required, a server name without verify-identity, a
// certificate without its key) are rejected by Validate.
//
// # TLS and SASL to Kafka
//
// --kafka-tls turns TLS on; --kafka-tls-ca replaces the system roots,
// --kafka-tls-cert/--kafka-tls-key present a client certificate and
// --kafka-tls-server-name replaces the broker host as the name checked.
// --kafka-tls-insecure-skip-verify turns verification off: anyone on the
// network path can then impersonate the brokers and read the records and
// the SASL password; it is for tests only and logged as a warning.
// --kafka-sasl-mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with
// --kafka-sasl-user and the password authenticates every Kafka client
// (PLAIN without --kafka-tls is logged as a warning: the password then
// crosses the network in clear text).
package config

// Package test holds the end-to-end suites: each starts a private MariaDB
// server and a Kafka (kfake over TCP by default, Apache Kafka with
// BINLOG_ROUTER_TEST_BROKER=apache), runs the real binlog-router binary,
// and asserts on what a separate read_committed consumer reads. What the
// suites start and read with lives in package test/harness; TestMain
// (main_test.go) hands the package to harness.Main, which builds the router
// once and starts the shared Kafka, so every suite runs in this one test
// binary.
//
// The files are grouped by the promise they prove, by name prefix:
//
//	prefix     promise                                             stated in
//	delivery_  every outbox row once, in per-aggregate order,      docs/guarantees.md,
//	           through stops, restarts, takeovers, stalls and      docs/transaction-shapes.md
//	           every transaction shape (large, XA, DDL)
//	fault_     the same under faults: crashes, database and        docs/guarantees.md,
//	           Kafka restarts and outages, purged binlogs,         docs/testing.md
//	           failover, rolling restarts, cluster faults
//	values_    table layouts and column values as records:         docs/column-types.md,
//	           layouts, types, payload contracts, CloudEvents,     docs/records.md,
//	           passthrough payloads, bad rows                      docs/contracts.md,
//	                                                               docs/cloudevents.md,
//	                                                               docs/bad-input.md
//	kafka_     Apache Kafka itself: SASL/TLS, ACLs, limits,        docs/kafka-issues.md,
//	           partitions, compaction, transaction versions,       docs/limits.md,
//	           hanging transactions, commit outcomes, timestamps,  docs/partitions.md,
//	           Java partitioner, Kafka gone too long               docs/security.md
//	debezium_  the same records as Debezium, and the cut-over      docs/debezium-migration.md
//	inbox_     the inbox applying what the router published once   docs/inbox.md
//	ops_       the operator's commands and settings: checkpoint,   docs/checkpoint.md,
//	           validate, replay, prune, config file, flags,        docs/validate.md,
//	           security flags, Prometheus alerts                   docs/replay.md,
//	                                                               docs/retention.md,
//	                                                               docs/alerts.md
//	recover_   recover: rows whose binlog is gone, from the table  docs/recover.md
//
// docs/testing.md lists which suites also run on Apache Kafka (the
// Makefile's APACHE_TESTS) and the fault suites' statistics.
package test

// Package validate checks, before the router runs, everything it needs from
// the source server and from Kafka, and says how to fix what is missing.
//
// Run connects like `binlog-router run` would (same addresses, credentials,
// TLS and SASL), reads settings, grants, outbox table definitions, topic
// configs and the stored checkpoint, and returns one Check per requirement:
//
//   - Fail: the router cannot start, or would lose or mis-map events, or
//     would stop at or refuse every row of an outbox table (a mapped column
//     of a type it does not publish, a character set it does not convert, a
//     DATETIME without a time zone, an event id column --require-uuid
//     refuses). Every Fail carries a Fix, and the Cause `run` would stop
//     with for it (configuration, a purged binlog, or any other error;
//     Worst picks the one run meets first), so that the validate command
//     exits as run would.
//   - Warn: the router works, but a recommendation is not followed (for
//     example binlog_row_metadata is not FULL, the cluster has fewer than
//     three brokers for exactly-once delivery, or a topic the router writes
//     to, or the transaction state log, cannot survive the loss of a broker
//     with acks=all: replication factor below 3, min.insync.replicas below
//     2 or equal to the replication factor). Every Warn carries a Fix.
//   - OK: the requirement is met; Detail says what was found.
//
// What it promises:
//
//   - It only reads. It writes nothing to the server and nothing to Kafka
//     except one InitProducerID for a throwaway transactional id
//     ("binlog-router-validate-<random>"), never the router's own, so a
//     running router is not fenced. The checkpoint topic is not created.
//   - Every network step is bounded by Config.Timeout (default 10s); an
//     unreachable server or cluster costs one timeout and one Fail, and the
//     checks that depend on it are left out rather than each timing out.
//   - The result depends only on what the server and the brokers answer,
//     so it is the same whether or not a router is running.
//
// Two of its checks also run inside `run`, before the binlog is read:
// RequireTables (tables.go: every configured outbox table exists, else the
// close names) and the guard of --allow-missing-table (guard.go: a
// binlog.TableGuard that stops the reader at a table whose name is close
// to a missing one). There they refuse rather than report.
package validate

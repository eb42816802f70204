// Package metrics is binlog-router's observability: Prometheus metrics, the
// /metrics, /healthz and /readyz endpoints, and the catch-up progress log.
//
// It owns one type, Metrics, that the rest of the program reports to
// through small interfaces it does not import: it satisfies relay.Metrics
// (Routed, Committed, Transactions, CaughtUp, RowError, Buffered) and
// binlog.Observer (OutboxUpdate, DDL, Replayed), and its KafkaHooks are franz-go hooks
// for every kgo.Client of the process. The extra methods Reconnect,
// DeadLetter and Failed are there for the reporters that count those.
// ReplicaWatch looks at the partitions the router writes to, with a client
// of its own, and reports those that refuse acks=all writes (no leader,
// fewer in-sync replicas than min.insync.replicas) in the log, a gauge and
// /readyz; it never changes what the relay does.
//
// Promises:
//
//   - Reporting never blocks beyond a short uncontended mutex and never
//     fails; a nil *Metrics is not valid, but every method is safe for
//     concurrent use.
//   - Label values are bounded: topics beyond MaxTopics distinct values and
//     error kinds beyond MaxKinds are counted under "other". No label ever
//     holds a GTID set, a row, a query or anything the source server sent
//     beyond a topic name.
//   - Time-derived values (lag, checkpoint age, readiness) are computed when
//     they are read, from the times last reported, so they keep growing
//     when the relay stalls instead of freezing at their last value.
//   - Nothing here logs or exposes secrets: the only text that leaves the
//     process is metric values, topic names, error kinds and the checkpoint
//     GTID set (in /readyz and the progress log).
package metrics

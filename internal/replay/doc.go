// Package replay re-publishes the outbox rows of a past binlog range: the
// operator's tool for a consumer that lost data, a new consumer that needs
// history, or a topic that was deleted.
//
// # What is replayed
//
// The range is given like a checkpoint: From is a GTID set, and replay
// starts after the transactions in it. It ends, inclusively, after the last
// transaction contained in To; or, with ToTime, at the first transaction
// committed after ToTime (that transaction is not replayed); and in every
// case at the server's executed GTID set read when the reader connected,
// so a replay always terminates. A transaction is in the range when To
// contains its GTID (MySQL: it is in the set; MariaDB: its domain is in To
// with a sequence number at least the transaction's). FromTime skips the
// transactions committed before it, up to the first one committed at or
// after it; from there on every transaction counts (binlog order, not
// timestamp order, defines the range). Commit times are the server's: whole
// seconds on MariaDB and MySQL before 8.0, microseconds on MySQL 8.0+.
//
// Resolving FromTime reads the binlog from From (the oldest retained binlog
// when From is empty) and only looks at each transaction's GTID event
// header: the cost is the network transfer and parse of everything before
// the time, at the reader's speed (some 250k rows/s on two cores), not a
// seek. Give a From close to the time when the binlog is large.
//
// # What consumers see
//
// A replay is a pass of the live router's loop (pipeline.RunPass): the
// range's bounds decide which transactions it routes and where it ends, and every
// row is routed as the live router routes it. Each row becomes exactly the
// record the live router produces (route.Router.Route: same key, value,
// headers with the original id and binlog_gtid, same timestamp), to the
// topic of the template with TopicPrefix prepended, partitioned with
// route.Partitioner, checked against the topic's record batch limit
// (kafka.TopicLimits); a row that cannot be routed stops the replay, or
// with OnInvalid dead-letter goes to DeadLetterTopic. Records are produced
// in Kafka transactions of a transactional id of the replay's own (never
// the router's, so a running router is not fenced): a kafka.Session that
// writes no checkpoint. They are committed at binlog transaction
// boundaries only, by the live router's cadence (at most CommitRecords
// records, or pipeline.DefaultCommitInterval old, or when the reader has nothing
// ready) and at the end: a read_committed consumer sees whole binlog
// transactions, never part of one. Replay never reads or writes the
// router's checkpoint.
//
// # Failure
//
// On an error or cancellation the open Kafka transaction is aborted: its
// records are never visible to read_committed consumers. What was committed
// stays, and Summary.Committed is the GTID set the committed records reach:
// replaying again with From set to it continues without repeating a row.
// A replay process that dies leaves its open transaction to the broker,
// which aborts it after TransactionTimeout; until then read_committed
// consumers of the partitions it wrote to wait at that transaction.
//
// # Dry run
//
// With DryRun nothing is produced: the loop's sink writes each record to
// Out as one JSON line (see Line), and the Kafka connection is used only
// to read the partition counts of existing topics and their record batch
// limits (a record too large for its topic fails a dry run as it would
// fail the replay). A commit flushes the lines.
package replay

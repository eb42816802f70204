// Package checkpoint stores and loads the router's position: the GTID set
// whose every outbox row has been published, one JSON value per router
// name, in a compacted single-partition Kafka topic. Inside a binlog
// transaction too large for one Kafka transaction it also names that
// transaction and how many of its outbox rows were published (TxnGTID,
// TxnRows).
//
// Contract:
//   - Record builds the checkpoint record. The relay writes it in the same
//     Kafka transaction as the records it covers (exactly-once), or after
//     they are acknowledged (at-least-once), so a stored checkpoint never
//     covers a row that was not published.
//   - Load returns the latest committed checkpoint of a name, reading with
//     read_committed isolation up to the last stable offset: records of
//     open or aborted transactions are never returned. It returns
//     ErrCheckpointMissing when the name has none. It does not wait for
//     transactions still open on the partition.
//   - Settle returns once every transaction that wrote to the partition
//     before the call has ended there (its last stable offset reached the
//     high watermark read first), or ErrUnsettled after its wait: a new
//     router session calls it after InitProducerId and before Load, so the
//     checkpoint it reads reflects the outcome of its previous transaction.
//   - Write stores one record (a checkpoint or a Tombstone) in its own
//     transaction of the router's transactional id, fencing a running
//     exactly-once router of that id, and returns once Load sees it (the
//     partition's last stable offset is past it).
//   - XAPrepared lists the XA transactions prepared within GTIDSet and not
//     yet committed or rolled back, with the binlog position of each prepare
//     group: the only way a restarted router finds their rows again.
//   - EnsureTopic creates the topic (cleanup.policy=compact, 1 partition)
//     when it is missing and refuses one whose cleanup policy would
//     delete checkpoints.
//
// Around the checkpoint, for the checkpoint command:
//   - CheckServable says whether the source can stream from a GTID set
//     (executed, not purged, and the server agrees when asked to stream),
//     else an error wrapping binlog.ErrBinlogPurged or ErrBeyondExecuted:
//     checkpoint set and run's --start gtid: never store or start from a
//     position the server cannot serve.
//   - ActiveSigns lists every sign that a router of a name is running (its
//     HA group's members, an open transaction of its transactional id, a
//     recent checkpoint, its binlog connection on the source) and the signs
//     it could not check; none means it looks stopped. No sign is proof
//     either way: checkpoint set and reset refuse on any.
//   - ParseDebeziumOffset, DebeziumPosition and DebeziumOffsetFor turn a
//     Debezium MySQL/MariaDB connector offset into a checkpoint position
//     (inside a transaction: the outbox rows Debezium had handled) and a
//     checkpoint back into the offset to store with Kafka Connect; an
//     offset that does not match the server's binlog is an error, never a
//     guess.
package checkpoint

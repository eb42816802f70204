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
package checkpoint

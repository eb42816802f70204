// Package checkpoint is the router's position: the GTID set whose every
// outbox row has been published, one JSON value per router name, stored in
// a compacted single-partition Kafka topic. Inside a binlog
// transaction too large for one Kafka transaction it also names that
// transaction and how many of its outbox rows were published (TxnGTID,
// TxnRows).
//
// Contract:
//   - Record builds the checkpoint record, and Tombstone the record that
//     deletes a name's checkpoint; Decode reads a stored value. The relay
//     writes the record in the same Kafka transaction as the records it
//     covers (exactly-once), or after they are acknowledged
//     (at-least-once), so a stored checkpoint never covers a row that was
//     not published. Reading and writing the topic is internal/kafka's
//     (LoadCheckpoint, Settle, WriteCheckpoint, EnsureCheckpointTopic).
//   - XAPrepared lists the XA transactions prepared within GTIDSet and not
//     yet committed or rolled back, with the binlog position of each prepare
//     group: the only way a restarted router finds their rows again.
//
// Around the checkpoint:
//   - StartAt resolves --start (earliest, latest or gtid:<set>) on the
//     source for a router without a stored checkpoint, checking an
//     explicit set as checkpoint set does; every refusal wraps
//     ErrInvalidStart and says how to correct --start. ResolveStart does
//     the same without asking the server, CheckStart only parses.
//
// For the checkpoint command:
//   - CheckServable says whether the source can stream from a GTID set
//     (executed, not purged, and the server agrees when asked to stream),
//     else an error wrapping binlog.ErrBinlogPurged or ErrBeyondExecuted:
//     checkpoint set and run's --start gtid: never store or start from a
//     position the server cannot serve.
//   - ActiveSigns lists every sign that a router of a name is running (its
//     HA group's members and an open transaction of its transactional id,
//     as kafka.DescribeActivity reads them into an Activity; a recent
//     checkpoint; its binlog connection on the source) and the signs
//     it could not check; none means it looks stopped. No sign is proof
//     either way: checkpoint set and reset refuse on any.
//   - ParseDebeziumOffset, DebeziumPosition and DebeziumOffsetFor turn a
//     Debezium MySQL/MariaDB connector offset into a checkpoint position
//     (inside a transaction: the outbox rows Debezium had handled) and a
//     checkpoint back into the offset to store with Kafka Connect; an
//     offset that does not match the server's binlog is an error, never a
//     guess.
package checkpoint

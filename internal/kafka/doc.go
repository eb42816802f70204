// Package kafka is the router's Kafka side: every Kafka client of the
// router is made here (TestKafkaClientsInOnePackage), and every request
// it sends is one of this package's.
//
// What it holds, and what each promises:
//
//   - Session, one active router session's Kafka side (pipeline.Sink states
//     its contract): Open fences, settles and loads the checkpoint; Limit
//     gives a topic's batch limit; Produce, Commit (the records with the
//     checkpoint that covers them, in one transaction for exactly-once),
//     Abort and Close drive the Producer below.
//   - Producer, the one producer of the relay and of replay: a franz-go
//     client set up for outbox records (route's murmur2 partitioner, a
//     bounded buffer, no linger, batches up to each topic's limit),
//     transactional when given a transactional id and idempotent
//     otherwise.
//   - Init, with a transactional id, initialises the producer id: any
//     older producer of the same id is fenced and its open transaction
//     aborted before Init returns nil.
//   - Produce never waits for an acknowledgement; it blocks only while the
//     buffer (MaxBufferedRecords, MaxBufferedBytes) is full, until ctx
//     ends. The first record that fails is kept, named by its event id and
//     binlog transaction (Err), and ends a Flush in progress at once:
//     after some failures (a fenced producer) franz-go would otherwise
//     hold the later records until the Flush's deadline.
//   - Flush returns once every record produced before it was acknowledged
//     or one failed; Err then says whether all succeeded.
//   - Commit commits the open transaction: every record of it becomes
//     visible to read_committed consumers, atomically (on Apache Kafka
//     once the broker has written the commit markers, a moment after
//     Commit returns); it is called only after a Flush with no failure.
//     If it returns an error the outcome may be unknown (Retriable) or the
//     transaction is lost (StaleEpoch).
//   - Abort ends the open transaction at the broker so that none of its
//     records become visible; Drop only forgets it locally, for a producer
//     whose epoch is stale: ending it would make franz-go bump the epoch
//     (KIP-588) and fence the producer that took over.
//   - The checkpoint topic: EnsureCheckpointTopic creates it
//     (cleanup.policy=compact, 1 partition) when it is missing and refuses
//     one whose cleanup policy would delete checkpoints. LoadCheckpoint
//     returns the latest committed checkpoint of a name, reading with
//     read_committed isolation up to the last stable offset (never a
//     record of an open or aborted transaction), or an error wrapping
//     checkpoint.ErrCheckpointMissing; it does not wait for open
//     transactions. Settle returns once every transaction that wrote to
//     the partition before the call has ended there (its last stable
//     offset reached the high watermark read first), or ErrUnsettled
//     after its wait: a new router session calls it after Init and before
//     LoadCheckpoint, so the checkpoint it reads reflects the outcome of
//     its previous transaction. WriteCheckpoint stores one record (a
//     checkpoint or a tombstone) in its own transaction of the router's
//     transactional id, fencing a running exactly-once router of that id,
//     and returns once LoadCheckpoint sees it.
//   - TopicLimits is the largest record batch each topic takes (the
//     smaller of --max-message-bytes and the topic's max.message.bytes,
//     read before the first record for the topic), so that a record too
//     large alone is a row error, never a refused batch.
//   - ReadTimestampWindows reads the topics' message timestamp windows,
//     which tell a record the brokers refused for its timestamp.
//   - Elector is a router's membership of its election group (--ha):
//     exactly one member, the active router, is assigned the checkpoint
//     topic's partition.
//   - DescribeActivity reads what Kafka shows of a router (its group's
//     members, its transactional id's state) for checkpoint set and reset.
//   - NewClient and NewAdmin make the other clients (validate, the
//     replica watch, dry runs, the checkpoint command).
//
// A batch retried after a retriable error (CONCURRENT_TRANSACTIONS at the
// first produce of a transaction, NOT_LEADER_OR_FOLLOWER) waits for a
// metadata refresh, which the producer makes at most every 100 ms.
//
// Retriable and StaleEpoch classify errors by Kafka error codes and
// franz-go's kgo.IsRetryableBrokerErr, never by message text.
package kafka

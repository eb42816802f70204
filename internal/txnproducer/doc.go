// Package txnproducer is the one Kafka producer of the router (relay) and
// of replay: a franz-go client set up for outbox records (route's murmur2
// partitioner, a bounded buffer, no linger, batches up to the broker's
// message size), transactional when given a transactional id and
// idempotent otherwise, and the classification of its errors.
//
// What it promises:
//
//   - Init, with a transactional id, initialises the producer id: any older
//     producer of the same id is fenced and its open transaction aborted
//     before Init returns nil.
//   - Produce never waits for an acknowledgement; it blocks only while the
//     buffer (MaxBufferedRecords, MaxBufferedBytes) is full, until ctx
//     ends. The first record that fails is kept, named by its event id and
//     binlog transaction (Err), and ends a Flush in progress at once: after
//     some failures (a fenced producer) franz-go would otherwise hold the
//     later records until the Flush's deadline.
//   - Flush returns once every record produced before it was acknowledged
//     or one failed; Err then says whether all succeeded.
//   - Commit commits the open transaction: every record of it becomes
//     visible to read_committed consumers, atomically (on Apache Kafka once
//     the broker has written the commit markers, a moment after Commit
//     returns); it is called only after a Flush with no failure. If it returns an error the outcome may be
//     unknown (Retriable) or the transaction is lost (StaleEpoch).
//   - Abort ends the open transaction at the broker so that none of its
//     records become visible; Drop only forgets it locally, for a producer
//     whose epoch is stale: ending it would make franz-go bump the epoch
//     (KIP-588) and fence the producer that took over.
//
// A batch retried after a retriable error (CONCURRENT_TRANSACTIONS at the
// first produce of a transaction, NOT_LEADER_OR_FOLLOWER) waits for a
// metadata refresh, which the client makes at most every 100 ms.
//
// Retriable and StaleEpoch classify errors by Kafka error codes and
// franz-go's kgo.IsRetryableBrokerErr, never by message text.
package txnproducer

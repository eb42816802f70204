// Package inbox consumes the records binlog-router publishes and applies
// each event at most once per consumer, so that redelivery is harmless.
//
// Kafka delivers a record again whenever a consumer dies after its
// database commit and before its offset commit; a replay (binlog-router
// replay) republishes records with the same "id" header; at-least-once
// delivery repeats records after a crash. The consumer therefore records
// every event it applies in an inbox table whose primary key is
// (consumer_name, event_id), in the same local transaction as the business
// change:
//
//	c, err := inbox.New(inbox.Config{
//		Brokers: brokers, Topics: []string{"outbox.event.OrderCreated"},
//		ConsumerName: "billing", DB: db, Dialect: inbox.MySQL,
//		Handler: func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
//			_, err := tx.ExecContext(ctx, "INSERT INTO invoices ...", ev.AggregateID)
//			return err
//		},
//	})
//	...
//	err = c.Run(ctx) // joins the group; until ctx ends, then leaves it
//
// New only validates the configuration: Run creates the Kafka client and
// joins the group, and leaves it and closes the client before it returns,
// so a Consumer that is never run holds no partitions. A Consumer runs
// once.
//
// # Per record
//
//  1. BEGIN (Config.TxOptions).
//  2. INSERT the inbox row (ConsumerName, Event.ID). If that primary key
//     exists the event was applied before: roll back, count a duplicate,
//     move on.
//  3. Run the handler in the same transaction.
//  4. COMMIT.
//
// There is no check-then-insert: the INSERT itself decides, so two
// consumers racing on one event cannot both apply it (the second waits for
// the first's row lock and then sees the conflict, or proceeds if the first
// rolled back).
//
// # What counts as a duplicate
//
// Only a conflict on the inbox primary key of the inbox INSERT:
//
//   - MySQL/MariaDB: error 1062 (ER_DUP_ENTRY) whose message names the key
//     'PRIMARY' (MariaDB, MySQL 5.7) or '<table>.PRIMARY' (MySQL 8),
//     compared without regard to case (lower_case_table_names).
//   - PostgreSQL: the insert is INSERT ... ON CONFLICT (consumer_name,
//     event_id) DO NOTHING, and a duplicate is zero rows affected. That
//     clause names exactly the primary key's columns, so a violation of
//     any other constraint is still an error.
//
// Everything else is an error and is retried: a deadlock (1213, 40P01), a
// lock wait timeout, a lost connection, a serialization failure, a unique
// key violation in the handler's own tables, a failed COMMIT. An error is
// never taken for "already done".
//
// # Offsets and crashes
//
// Offsets are committed to Kafka only for events whose transaction
// committed (or that were duplicates or dead-lettered): every
// Config.CommitInterval, when partitions are revoked (after draining them),
// and when Run returns. Auto-commit is off. The consumer reads with
// read_committed, in a group with the cooperative-sticky balancer.
// Transaction markers are read too (kgo.KeepControlRecords) and skipped,
// so the committed offset of a caught-up partition is its end, past the
// last marker.
//
//   - Killed before COMMIT: the transaction rolls back; the event is
//     redelivered and applied then.
//   - Killed after COMMIT, before the offset commit: the event is
//     redelivered and skipped as a duplicate.
//   - Partitions revoked in a rebalance: nothing more is started on them,
//     a pending retry is dropped, the event in progress is waited for (it
//     commits or fails as it would have), their offsets are committed, and
//     the new owner continues from there: a graceful hand-over redelivers
//     nothing. Only the revoked partitions stop; the others keep flowing.
//     Offset commits and revocation are serialized, so no commit of a
//     partition this member gave up can land after the new owner's.
//   - Partitions lost (session expired): their work is cancelled, and they
//     cannot be committed; the new owner redelivers what was handled since
//     the last commit, as duplicates.
//   - Run's context ends: the work in progress is cancelled (statements
//     under way are interrupted and the transaction rolls back; a COMMIT
//     under way is never cut off), handled offsets are committed, the
//     group is left.
//
// So each event's effect is applied exactly once per ConsumerName, as long
// as its inbox row exists: Pruner deletes old rows, after which a
// redelivery of that event would apply it again.
//
// # Order and concurrency
//
// Records of one partition are handled one at a time, in offset order.
// The poll loop appends fetched records to per-partition backlogs, and a
// pool of Config.Workers goroutines handles the partitions that have
// records, so a slow or failing partition never holds up the others. A
// worker lets another partition have a go after 100 records when some
// wait. A partition is paused (kgo PauseFetchPartitions) while its backlog
// could not take another poll, until half of that room is free again, and
// while its first record waits for a retry; so at most
// Config.PartitionBacklog records wait per partition. Fetches wait at most
// 500 ms for data (kgo.FetchMaxWait, which KafkaOptions may override), so
// a resumed partition is fetched again soon.
//
// # Failures
//
// A failed attempt is retried after InitialBackoff·2^(attempt-1), capped at
// MaxBackoff, with jitter (defaults 1 s doubling to 60 s), up to
// MaxAttempts, holding that partition's order; the partition holds no
// worker while it waits. Then, by Config.OnFailure, the record is produced
// to the dead-letter topic (default "<consumer>.dead-letter"; original
// key, value and headers, plus inbox_original_topic,
// inbox_original_partition, inbox_original_offset, inbox_attempts,
// inbox_error and inbox_consumer) and the partition moves on; or Run stops
// with a *HandlerError and the partition's committed offset is the failed
// event's, so the next run starts with it. Dead-lettering is at least
// once: a crash between the dead-letter produce and the offset commit
// dead-letters the record again. Under DeadLetter, Run creates the
// dead-letter topic at start (the brokers' default partitions and
// replication factor) if it does not exist, and returns an error naming it
// if it can neither find nor create it: the consumer never asks the
// brokers to create topics while producing. Each retry and dead letter is
// logged with the event id.
//
// A record without an "id" header is rejected to the dead-letter topic
// (ErrMissingID, inbox_attempts 0) without calling the handler, or, with
// MissingIDDerive, handled under the id "topic/partition/offset".
//
// # Metrics
//
// With Config.Registerer: inbox_processed_total, inbox_duplicates_total,
// inbox_retries_total, inbox_dead_letters_total (counters) and
// inbox_lag_records{topic,partition}: the offsets between the next record
// to handle and the partition's last stable offset (the read_committed
// end), updated on every fetch and every handled record and deleted when
// the partition is revoked or lost. All carry the label consumer;
// consumers of one name in one process share the series. Stats returns
// the same counts, per Consumer, and the summed lag.
//
// # Databases
//
// MySQL and MariaDB through github.com/go-sql-driver/mysql, PostgreSQL
// through github.com/jackc/pgx/v5/stdlib (driver "pgx"); the caller opens
// the *sql.DB. DDL and CreateTable give the inbox table for each. Pruner
// (or Consumer.Prune) deletes a consumer's old rows in small batches and
// needs only the database.
package inbox

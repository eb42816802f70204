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
//	err = c.Run(ctx) // until ctx ends
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
//     'PRIMARY' (MariaDB, MySQL 5.7) or '<table>.PRIMARY' (MySQL 8).
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
//
//   - Killed before COMMIT: the transaction rolls back; the event is
//     redelivered and applied then.
//   - Killed after COMMIT, before the offset commit: the event is
//     redelivered and skipped as a duplicate.
//   - Partitions revoked: work on them stops (the current transaction
//     finishes or rolls back, a pending retry is abandoned), their offsets
//     are committed, and the new owner continues from there. Lost
//     partitions (session expired) cannot be committed; the new owner
//     redelivers what was handled since the last commit, as duplicates.
//
// So each event's effect is applied exactly once per ConsumerName, as long
// as its inbox row exists: Prune deletes old rows, after which a
// redelivery of that event would apply it again.
//
// # Order and concurrency
//
// Records of one partition are handled one at a time, in offset order.
// Up to Config.Workers partitions are handled at once.
//
// # Failures
//
// A failed attempt is retried after InitialBackoff·2^(attempt-1), capped at
// MaxBackoff, with jitter (defaults 1 s doubling to 60 s), up to
// MaxAttempts, holding that partition. Then, by Config.OnFailure, the
// record is produced to the dead-letter topic (default
// "<consumer>.dead-letter"; original key, value and headers, plus
// inbox_original_topic, inbox_original_partition, inbox_original_offset,
// inbox_attempts, inbox_error and inbox_consumer) and the partition moves
// on; or Run stops with a *HandlerError and the offset stays before the
// event. Dead-lettering is at least once: a crash between the dead-letter
// produce and the offset commit dead-letters the record again. Each retry
// and dead letter is logged with the event id.
//
// A record without an "id" header is rejected to the dead-letter topic
// (ErrMissingID) without calling the handler, or, with MissingIDDerive,
// handled under the id "topic/partition/offset".
//
// # Metrics
//
// With Config.Registerer: inbox_processed_total, inbox_duplicates_total,
// inbox_retries_total, inbox_dead_letters_total (counters) and
// inbox_lag_records{topic,partition} (records behind the high watermark),
// all labelled consumer. Stats returns the same counts.
//
// # Databases
//
// MySQL and MariaDB through github.com/go-sql-driver/mysql, PostgreSQL
// through github.com/jackc/pgx/v5/stdlib (driver "pgx"); the caller opens
// the *sql.DB. DDL and CreateTable give the inbox table for each.
package inbox

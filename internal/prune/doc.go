// Package prune deletes outbox rows that the router has already
// published.
//
// It owns the retention of the outbox tables: the cutoff (Cutoff), and
// the batched delete (Run) over a SQL connection of its own user, which
// needs only SELECT and DELETE on the outbox tables.
//
// What it promises:
//   - It never deletes a row whose created-at column is at or after the
//     cutoff: every DELETE carries `created_at < cutoff` in its WHERE
//     clause, whatever else the batch selected.
//   - The cutoff is never later than a moment every transaction committed
//     before which the router's checkpoint covers, less a margin
//     (Cutoff): the margin covers a transaction that stayed open longer
//     than it, whose rows carry a created-at before its commit.
//   - It never runs one big transaction: each batch is one DELETE of at
//     most Config.Batch rows in autocommit, on a session at READ
//     COMMITTED (no gap locks in front of the application's INSERTs),
//     followed by a pause, under a cap of rows per second.
//   - A dry run counts the rows it would delete and deletes nothing.
//
// Deleting a published row loses no event: the router reads the binlog,
// not the table, and outbox rows are never updated, so the row's INSERT
// stays in the binlog however the table changes. The router ignores the
// DELETE row events of an outbox table. What a stop or crash leaves: the
// batches already committed are deleted, the one in flight is rolled back
// by the server, and a second run deletes what is left.
package prune

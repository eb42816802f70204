// Package recovery publishes outbox rows that the binlog can no longer
// give, reading them from the outbox table: `binlog-router recover`.
//
// It owns the consistent read of the outbox tables at a known binlog
// position (the snapshot, snapshot.go), the chunked read of a window of
// rows (table.go), and their publication, skipping the rows already in
// Kafka (run.go). The package is named recovery because recover is Go's
// builtin.
//
// What it promises:
//   - Every row is read inside one consistent-snapshot transaction whose
//     binlog position is known (Summary.Snapshot: MariaDB's
//     binlog_snapshot_file/position and BINLOG_GTID_POS; MySQL 8's
//     performance_schema.log_status while commits are blocked). A
//     transaction is either wholly in the snapshot, and its GTID in
//     Snapshot.GTID, or wholly after it.
//   - Rows are read Config.Chunk at a time by keyset, one chunk in memory,
//     at most Config.Rate rows per second (pacer), in the order
//     Config.Order gives (order.go): key order (`key > last AND window
//     ORDER BY key LIMIT n`) or created-at order (`(c > c(last) OR (c =
//     c(last) AND key > last)) AND window ORDER BY c, key LIMIT n`, c(last)
//     the last row's value looked up by its key), which reads every row
//     once however many share a creation time. OrderAuto takes key order
//     for an AUTO_INCREMENT key, else created-at order when the creation
//     time column is mapped, else key order with a warning; it never
//     guesses from a key's values. Either order is a proxy of the commit
//     order, which the table does not keep: values taken at insert, ties
//     broken by the key. Summary.Orders says which order each table was
//     read in and why. A progress line every Config.ProgressEvery gives
//     the counts, the rate and an estimate of what is left from the key
//     range, or from the creation time range when an index begins with
//     the column (keyProgress). The table needs a primary key of one
//     column.
//   - Each row becomes the record the router builds for it (route.Router:
//     topic, key, partition by murmur2 of the key, value, headers,
//     timestamp from the creation time column), except the binlog_gtid
//     header, which is empty: the table does not say which transaction
//     wrote the row. Values are read as the binlog reader hands them over:
//     text converted to UTF-8 by the server, a 16-byte binary event id as
//     UUID text, a TIMESTAMP as its instant, a DATETIME in Config.Zone.
//   - A row whose event id is in the outbox topics is not published. The
//     ids are the `id` headers of every record the topics matching the
//     topic template hold from Since - Margin (by record timestamp; from
//     their start without Since) up to their last stable offset, read with
//     read_committed isolation, at most Config.MaxKnownIDs of them.
//   - Records are produced with Config.TransactionalID (never a router's)
//     in Kafka transactions of Config.CommitRecords records, or fewer when
//     one has been open Config.CommitInterval at a chunk's end; a failure
//     aborts the open one. What was committed stays: a second run skips
//     it by its ids, so a crash or stop at any moment loses nothing and
//     publishes nothing twice, provided the second run's window covers
//     the first's.
//   - With Config.Checkpoint (the command sets it; it fences the
//     router's transactional ids before Run), the router's checkpoint at
//     Snapshot.GTID is produced after the last row, in the recovery's
//     last Kafka transaction: the last records and the checkpoint are
//     committed together or not at all, so no moment sees the records
//     committed and the old checkpoint standing for a finished
//     recovery. A stop before that commit leaves the old checkpoint (with
//     the progress, below): run recover again before run. Without
//     Config.Checkpoint, Run writes none.
//   - With Config.Progress, every Kafka transaction but the last also
//     writes the router's checkpoint record holding the recovery's
//     progress (checkpoint.Recovery: the snapshot, the window, the table
//     and the last row handled), which run refuses to start from. Given
//     it back (Config.Resume) for the same window, a run goes on from
//     that row and hands over at the first run's snapshot, leaving the
//     rows committed since then, found in the binlog, to run (resume.go
//     gives the argument); when that binlog is gone it reads the whole
//     window again and hands over at its own snapshot.
//   - With DryRun it reads and counts per topic, and produces nothing.
//   - Given the stored checkpoint's time (Config.CheckpointTime), it
//     reports what of the gap after it the window or the table leaves
//     out (Summary.Uncovered, coverage.go): rows created after it and
//     before Since, and a table whose oldest row is newer than it. It
//     reports; it does not refuse.
//   - A row the router refuses stops the recovery before it, or with
//     Config.OnInvalid dead-letter becomes its dead letter
//     (route.DeadLetter) in Config.DeadLetterTopic, whose ids are then
//     read as published too.
//   - A record too large for its topic is refused by the session before
//     it is produced (kafka.TooLargeError) and is such a row error too.
//
// Not built in this version: a spill of the id set beyond memory (it is
// capped by Config.MaxKnownIDs, 16 bytes per UUID id), and run's check of
// a timestamp the topic refuses: such a record fails its produce and
// stops the recovery.
package recovery

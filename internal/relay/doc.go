// Package relay is the pipeline: binlog transactions in, Kafka records and
// checkpoints out.
//
// One goroutine reads the binlog (a Source: binlog.Reader) and hands
// transactions, in batches, through a binlog.Queue to the relay goroutine
// (a batch may end inside a transaction: Batch.Open; a transaction's
// rows come in order, and the GTID set moves only over the transactions a
// batch completes),
// which turns each outbox row into a record (route.Router) and produces it
// with a Sink (kafka.Session: franz-go). franz-go's own goroutines
// send and retry. Memory is bounded by the queue's rows and bytes
// (QueueRows, QueueBytes, plus the batch in hand), the reader's event
// cache, and franz-go's MaxBufferedRecords/MaxBufferedBytes: Produce blocks
// when the buffer is full, which stops the relay loop, which leaves the
// queue full, which stops the reader.
//
// The loop (loop.go) is one for the live router and for replay, with two
// commit policies. The live checkpoint (Relay): every commit writes the
// checkpoint that covers it, a commit may fall inside a binlog
// transaction, a stop is graceful, and the relay alone elects, retries
// sessions and names a fenced producer. A pass (RunPass, what replay
// runs): its Pass includes, skips or ends before each binlog
// transaction; its Sink writes no checkpoint (kafka.SessionConfig
// NoCheckpoint, or a dry run's printer); it commits only at binlog
// transaction boundaries and is aborted, not stopped, when its context
// ends. Both route a row alike: per-topic batch limits, dead letters by
// OnInvalid, refused timestamps.
//
// Commit points fall on binlog transaction boundaries: after
// CommitRecords records, after CommitInterval, or as soon as the reader has
// nothing more to hand over (so an idle router commits at once, or
// CommitLinger after its previous commit: transactions that come within
// the linger share one Kafka transaction). A Kafka transaction is never
// larger than CommitRecords records nor older than half the
// TransactionTimeout: inside a larger binlog transaction it is committed
// there, with a checkpoint naming the position inside it
// (checkpoint.Checkpoint TxnGTID, TxnRows), from which a new session
// resumes (Source.RunResume). Read_committed consumers then see such a
// binlog transaction in parts.
//
// A stale producer epoch is either a transaction timeout (the process was
// paused: ErrTransactionTimedOut, a new session resumes in-process) or
// another instance with the same name (ErrFenced, final). A stop that
// cannot commit within ShutdownTimeout aborts and returns
// ErrShutdownTimeout.
//
// Exactly-once (default): one transactional producer. The records of one
// or more complete binlog transactions (or part of one too large for a
// Kafka transaction) and the checkpoint record that covers them are
// written in one Kafka transaction. A crash before EndTransaction leaves
// an open transaction that the next instance's producer-id
// initialisation aborts (fencing); a session learns the outcome of its
// previous transaction before it loads the checkpoint (Sink.Open:
// InitProducerId, then kafka.Settle, then kafka.LoadCheckpoint:
// DESIGN.md), and never
// resumes from a checkpoint behind one Kafka acknowledged to this process
// (ErrCheckpointBehind), so read_committed consumers see every outbox row
// exactly once. A paused old instance cannot commit after a new one started: its
// producer epoch is fenced.
//
// At-least-once: one idempotent producer. At a commit point all records
// are flushed (acknowledged), then the checkpoint is produced; records go
// on flowing while it is acknowledged, and a stop waits for it. A crash
// loses no row; it can repeat the rows produced since the last stored
// checkpoint (at most about two commit intervals).
//
// In both modes the checkpoint never covers a row that was not routed:
// a row that cannot be routed stops the relay (or, by policy, goes to the
// dead-letter topic first), and a failed produce aborts the Kafka
// transaction (exactly-once) or stops before the checkpoint
// (at-least-once). A row whose record timestamp the brokers refuse
// (INVALID_TIMESTAMP, for its whole batch) becomes such a row error in the
// next session, which starts from the committed checkpoint: the refused
// records outside the topic's timestamp window are marked first
// (timestamps.go).
package relay

// Package pipeline is the loop that moves binlog transactions to Kafka:
// source → route → sink, one loop for the live router (internal/relay)
// and for replay, with two commit policies.
//
// One goroutine reads the binlog (a Source: binlog.Reader) and hands
// transactions, in batches, through a binlog.Queue to the loop's
// goroutine (a batch may end inside a transaction: Batch.Open; a
// transaction's rows come in order, and the GTID set moves only over the
// transactions a batch completes), which turns each outbox row into a
// record (route.Router) and produces it with a Sink (kafka.Session:
// franz-go). franz-go's own goroutines send and retry. Memory is bounded
// by the queue's rows and bytes (QueueRows, QueueBytes, plus the batch in
// hand), the reader's event cache, and franz-go's
// MaxBufferedRecords/MaxBufferedBytes: Produce blocks when the buffer is
// full, which stops the loop, which leaves the queue full, which stops the
// reader.
//
// Every row is routed alike under both policies: the topic's record batch
// limit (a record the Sink refuses as too large is a row error:
// deadletter.go), dead letters by OnInvalid (InvalidFail stops the loop
// with the row's error, InvalidDeadLetter writes it to DeadLetterTopic,
// its payload truncated to fit, in the same Kafka
// transaction and goes on), and refused timestamps (timestamps.go: a row
// whose record timestamp the brokers refused, INVALID_TIMESTAMP for its
// whole batch, becomes such a row error in the next session, which starts
// from the committed checkpoint; the records outside the topic's
// timestamp window are marked first). The checkpoint never covers a row
// that was not routed: a failed produce aborts the Kafka transaction
// (exactly-once) or stops before the checkpoint (at-least-once).
//
// Commit points fall on binlog transaction boundaries: after
// CommitRecords records, after CommitInterval, or as soon as the reader
// has nothing more to hand over (so an idle router commits at once, or
// CommitLinger after its previous commit: transactions that come within
// the linger share one Kafka transaction). Transactions without outbox
// rows are committed at most every IdleCheckpoint. Kafka that takes
// nothing for KafkaTimeout while something waits ends the loop with
// ErrKafkaStalled.
//
// The live checkpoint (Live, NewLive, Loop.RunSession): every commit
// writes the checkpoint that covers it (Sink.Commit). A Kafka transaction
// is never larger than CommitRecords records nor older than half the
// TransactionTimeout: inside a larger binlog transaction it is committed
// there, with a checkpoint naming the position inside it
// (checkpoint.Checkpoint TxnGTID, TxnRows), from which a new session
// resumes (Source.RunResume). Read_committed consumers then see such a
// binlog transaction in parts. A stop (the end of RunSession's context)
// is graceful, like net/http.Server.Shutdown (stop.go): the loop takes no
// row past the next transaction boundary (or, half ShutdownTimeout
// later, stops inside the binlog transaction), commits and returns nil;
// one that cannot commit within ShutdownTimeout aborts the open Kafka
// transaction and returns ErrShutdownTimeout. What happens between
// sessions (the election, the retry, the start position, naming a fenced
// producer) is the live router's: internal/relay.
//
// A pass (RunPass, what replay runs): its Pass includes, skips or ends
// before each binlog transaction; its Sink writes no checkpoint
// (kafka.SessionConfig NoCheckpoint, or a dry run's printer); it commits
// only at binlog transaction boundaries (nothing would name a position
// inside one) and is aborted, not stopped, when its context ends: what
// was committed stays.
package pipeline

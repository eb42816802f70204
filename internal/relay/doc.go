// Package relay is the live router: the loop of internal/pipeline with
// the live checkpoint (pipeline.Live: every commit writes the checkpoint
// that covers it, a commit may fall inside a binlog transaction, a stop
// is graceful), plus what only the live router does. The loop's own
// contract (how rows are routed, batch limits, dead letters, refused
// timestamps, commit points, the stop) is in package pipeline's
// documentation.
//
// A Relay runs one session of the loop after another (Loop.RunSession).
// Before each it opens a Sink, which fences older producers and loads the
// checkpoint, and resolves where the session starts (start.go: the
// checkpoint, or --start without one). A session ended by a Kafka error
// that waiting may cure starts a new one from the committed checkpoint
// (retry.go), as a restarted process would; a Kafka outage is logged
// once when it begins and once when a commit ends it (outage.go); a
// session that read a checkpoint behind one Kafka acknowledged stops
// (outcome.go: ErrCheckpointBehind). With HA it runs only while elected.
// It reports the age of the open Kafka transaction (txnwatch.go).
//
// A stale producer epoch is either a transaction timeout (the process was
// paused: ErrTransactionTimedOut, a new session resumes in-process) or
// another instance with the same name (ErrFenced, final): the relay names
// it (fence.go, pipeline.Live.Fenced). A stop that cannot commit within
// ShutdownTimeout aborts and returns pipeline.ErrShutdownTimeout.
//
// Exactly-once (default): one transactional producer. The records of one
// or more complete binlog transactions (or part of one too large for a
// Kafka transaction) and the checkpoint record that covers them are
// written in one Kafka transaction. A crash before EndTransaction leaves
// an open transaction that the next instance's producer-id
// initialisation aborts (fencing); a session learns the outcome of its
// previous transaction before it loads the checkpoint (pipeline.Sink.Open:
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
// In both modes the checkpoint never covers a row that was not routed
// (package pipeline). A row whose record timestamp the brokers refuse
// ends the session; the relay has the loop mark the refused rows
// (Loop.JudgeRefused) and starts a new session, which handles them as row
// errors.
package relay

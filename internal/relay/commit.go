package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// commit makes everything handed to Kafka since the last commit durable
// together with the checkpoint that covers it. Inside a binlog
// transaction the checkpoint records how many of its outbox rows were
// produced (see splittable).
func (r *Relay) commit(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			r.cfg.Metrics.Failed("commit")
		}
	}()
	work := ctx // outlives this call: the at-least-once checkpoint is not waited for
	ctx, cancel := context.WithTimeout(ctx, r.cfg.KafkaTimeout)
	defer cancel()
	rec, err := r.checkpoint().Record(r.cfg.CheckpointTopic)
	if err != nil {
		return err
	}
	switch r.cfg.Delivery {
	case ExactlyOnce:
		if err := r.begin(); err != nil {
			return err
		}
		r.out.Produce(ctx, rec)
		if err := r.flush(ctx); err != nil {
			return err
		}
		if err := r.out.Commit(ctx); err != nil {
			return &commitError{fmt.Errorf("committing Kafka transaction with checkpoint %s: %w", r.pending, err)}
		}
	default:
		// The checkpoint follows the records it covers only once they are
		// acknowledged. Its own acknowledgement is not waited for: records
		// go on flowing meanwhile, a failure stops the relay at the next
		// flush, and a checkpoint lost with the process only repeats rows
		// (at least once). finish waits for it when the relay stops.
		if err := r.flush(ctx); err != nil {
			return err
		}
		r.out.Produce(work, rec)
	}
	r.cfg.Metrics.Committed(r.pending.String(), r.pendingTime, r.records)
	r.committed = r.pending.Clone()
	r.commits++
	if r.progress != nil {
		r.progress()
	}
	r.records, r.pendingTxns = 0, 0
	r.lastCheckpoint = time.Now()
	return nil
}

// finish makes the last commit when the relay stops, and waits for the
// checkpoint to be acknowledged.
func (r *Relay) finish(ctx context.Context) error {
	if err := r.commitIf(ctx, r.pendingTxns > 0 || r.records > 0); err != nil {
		return err
	}
	if r.cfg.Delivery == ExactlyOnce {
		return nil // EndTransaction returned: committed
	}
	fctx, cancel := context.WithTimeout(ctx, r.cfg.KafkaTimeout)
	defer cancel()
	return r.flush(fctx)
}

// flush waits until every produced record is acknowledged and returns the
// first produce error. A produce error ends the wait at once (Sink.Flush).
// A wait ended by the stop's deadline says so (ErrShutdownTimeout): Kafka
// is named only when the wait was Kafka's to end.
func (r *Relay) flush(ctx context.Context) error {
	err := r.out.Flush(ctx)
	if perr := r.out.Err(); perr != nil {
		return fmt.Errorf("producing records: %w", perr)
	}
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrShutdownTimeout) {
		return fmt.Errorf("flushing records: %w", cause)
	}
	return fmt.Errorf("flushing records (Kafka unavailable for %s? see --kafka-timeout): %w", r.cfg.KafkaTimeout, err)
}

func (r *Relay) checkpoint() *checkpoint.Checkpoint {
	s := r.source.Server()
	txnGTID, txnRows := "", 0
	if r.openRows > 0 {
		txnGTID, txnRows = r.openGTID, r.openRows
	}
	return &checkpoint.Checkpoint{
		Name:       r.cfg.Name,
		GTIDSet:    r.pending.String(),
		Flavor:     string(s.Flavor),
		ServerID:   s.ServerID,
		ServerUUID: s.ServerUUID,
		BinlogFile: r.pendingPos.File,
		BinlogPos:  r.pendingPos.Pos,
		TxnGTID:    txnGTID,
		TxnRows:    txnRows,
		Time:       time.Now().UTC(),
		Events:     r.events,
		Source:     r.cfg.Source,
		Version:    r.cfg.Version,
		Layouts:    r.pendingLayouts,
		XAPrepared: r.pendingXA,
	}
}

// commitError is a failed EndTransaction(commit): Kafka may have
// committed or not (errCommitUnknown), which the next session learns.
type commitError struct{ err error }

func (e *commitError) Error() string   { return e.err.Error() }
func (e *commitError) Unwrap() []error { return []error{e.err, errCommitUnknown} }

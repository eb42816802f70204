package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// commit makes everything handed to Kafka since the last commit durable
// together with the checkpoint that covers it (Sink.Commit); a pass's sink
// gets none. Inside a binlog transaction the checkpoint records how many
// of its outbox rows were produced (see splittable).
func (r *loop) commit(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			r.cfg.Metrics.Failed("commit")
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.KafkaTimeout)
	defer cancel()
	if err := r.out.Commit(ctx, r.checkpoint()); err != nil {
		return r.kafkaError(ctx, err)
	}
	if r.pass != nil {
		r.pass.Committed(r.cur.records)
	}
	r.cfg.Metrics.Committed(r.at.pending.String(), r.at.sourceTime, r.cur.records, r.cur.since)
	r.at.committed = r.at.pending.Clone()
	r.commits++
	if r.outage != nil {
		r.outage.resumed()
	}
	if r.progress != nil {
		r.progress()
	}
	r.cur.records, r.cur.txns = 0, 0
	r.cur.last = time.Now()
	return nil
}

// finish makes the last commit when the relay stops, and waits for the
// checkpoint to be acknowledged (at-least-once; exactly-once the commit
// is).
func (r *loop) finish(ctx context.Context) error {
	if err := r.commitIf(ctx, r.cur.txns > 0 || r.cur.records > 0); err != nil {
		return err
	}
	fctx, cancel := context.WithTimeout(ctx, r.cfg.KafkaTimeout)
	defer cancel()
	if err := r.out.Close(fctx); err != nil {
		return r.kafkaError(fctx, err)
	}
	return nil
}

// kafkaError names what ended a wait for Kafka: records not acknowledged
// before the stop's deadline say so (ErrShutdownTimeout), and Kafka is
// named only when the wait was Kafka's to end.
func (r *loop) kafkaError(ctx context.Context, err error) error {
	if !errors.Is(err, kafka.ErrNotAcknowledged) {
		return err
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrShutdownTimeout) {
		return fmt.Errorf("flushing records: %w", cause)
	}
	return fmt.Errorf("flushing records (Kafka unavailable for %s? see --kafka-timeout): %w", r.cfg.KafkaTimeout, err)
}

// checkpoint is the live relay's checkpoint of pending; nil for a pass,
// which writes none.
func (r *loop) checkpoint() *checkpoint.Checkpoint {
	if r.pass != nil {
		return nil
	}
	s := r.source.Server()
	txnGTID, txnRows := "", 0
	if r.at.openRows > 0 {
		txnGTID, txnRows = r.at.openGTID, r.at.openRows
	}
	return &checkpoint.Checkpoint{
		Name:       r.cfg.Name,
		GTIDSet:    r.at.pending.String(),
		Flavor:     string(s.Flavor),
		ServerID:   s.ServerID,
		ServerUUID: s.ServerUUID,
		BinlogFile: r.at.binlogPos.File,
		BinlogPos:  r.at.binlogPos.Pos,
		TxnGTID:    txnGTID,
		TxnRows:    txnRows,
		Time:       time.Now().UTC(),
		Events:     r.events,
		Source:     r.cfg.Source,
		Version:    r.cfg.Version,
		Layouts:    r.at.layouts,
		XAPrepared: r.at.xa,
	}
}

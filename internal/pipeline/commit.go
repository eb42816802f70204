package pipeline

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
func (l *Loop) commit(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			l.cfg.Metrics.Failed("commit")
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, l.cfg.KafkaTimeout)
	defer cancel()
	if err := l.out.Commit(ctx, l.checkpoint()); err != nil {
		return l.kafkaError(ctx, err)
	}
	if l.pass != nil {
		l.pass.Committed(l.cur.records)
	}
	l.cfg.Metrics.Committed(l.at.pending.String(), l.at.sourceTime, l.cur.records, l.cur.since)
	l.at.committed = l.at.pending.Clone()
	l.commits++
	if l.live != nil && l.live.Committed != nil {
		l.live.Committed()
	}
	if l.progress != nil {
		l.progress()
	}
	l.cur.records, l.cur.txns = 0, 0
	l.cur.last = time.Now()
	return nil
}

// finish makes the last commit when the loop stops, and waits for the
// checkpoint to be acknowledged (at-least-once; exactly-once the commit
// is).
func (l *Loop) finish(ctx context.Context) error {
	if err := l.commitIf(ctx, l.cur.txns > 0 || l.cur.records > 0); err != nil {
		return err
	}
	fctx, cancel := context.WithTimeout(ctx, l.cfg.KafkaTimeout)
	defer cancel()
	if err := l.out.Close(fctx); err != nil {
		return l.kafkaError(fctx, err)
	}
	return nil
}

// kafkaError names what ended a wait for Kafka: records not acknowledged
// before the stop's deadline say so (ErrShutdownTimeout), and Kafka is
// named only when the wait was Kafka's to end.
func (l *Loop) kafkaError(ctx context.Context, err error) error {
	if !errors.Is(err, kafka.ErrNotAcknowledged) {
		return err
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrShutdownTimeout) {
		return fmt.Errorf("flushing records: %w", cause)
	}
	return fmt.Errorf("flushing records (Kafka unavailable for %s? see --kafka-timeout): %w", l.cfg.KafkaTimeout, err)
}

// checkpoint is the live router's checkpoint of pending; nil for a pass,
// which writes none.
func (l *Loop) checkpoint() *checkpoint.Checkpoint {
	if l.live == nil {
		return nil
	}
	s := l.source.Server()
	txnGTID, txnRows := "", 0
	if l.at.openRows > 0 {
		txnGTID, txnRows = l.at.openGTID, l.at.openRows
	}
	return &checkpoint.Checkpoint{
		Name:       l.live.Name,
		GTIDSet:    l.at.pending.String(),
		Flavor:     string(s.Flavor),
		ServerID:   s.ServerID,
		ServerUUID: s.ServerUUID,
		BinlogFile: l.at.binlogPos.File,
		BinlogPos:  l.at.binlogPos.Pos,
		TxnGTID:    txnGTID,
		TxnRows:    txnRows,
		Time:       time.Now().UTC(),
		Events:     l.events,
		Source:     l.live.Source,
		Version:    l.live.Version,
		Layouts:    l.at.layouts,
		XAPrepared: l.at.xa,
	}
}

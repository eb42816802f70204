package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/kafka"
)

// producer is the sink of a real replay: the router's transactional
// producer (kafka.Producer) with the replay's own transactional id, whose
// Kafka transactions are opened by add and ended by commit or abort.
type producer struct {
	p     *kafka.Producer
	txnID string
}

var _ sink = (*producer)(nil)

// newProducer connects and initialises the transactional id. A previous
// producer with the same id is fenced and its open transaction aborted;
// the ids of replays are their own, so no router is affected.
func newProducer(ctx context.Context, cfg *Config) (*producer, error) {
	p, err := kafka.New(kafka.Config{
		Kafka:              cfg.Kafka,
		TransactionalID:    cfg.TransactionalID,
		TransactionTimeout: cfg.TransactionTimeout,
		MaxBufferedRecords: cfg.MaxBufferedRecords,
		MaxBufferedBytes:   cfg.MaxBufferedBytes,
		MaxMessageBytes:    cfg.MaxMessageBytes,
		AutoCreateTopics:   cfg.AutoCreateTopics,
		Logger:             cfg.Logger,
		Log:                cfg.Logger.With().Str("transactional_id", cfg.TransactionalID).Logger(),
	})
	if err != nil {
		return nil, err
	}
	if err := p.Init(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return &producer{p: p, txnID: cfg.TransactionalID}, nil
}

func (p *producer) add(ctx context.Context, rec *kgo.Record) error {
	if err := p.p.Begin(); err != nil {
		return err
	}
	p.p.Produce(ctx, rec)
	return p.p.Err()
}

func (p *producer) commit(ctx context.Context) error {
	if _, open := p.p.Began(); !open {
		return nil
	}
	if err := p.p.Flush(ctx); err != nil {
		return fmt.Errorf("flushing records: %w", err)
	}
	if err := p.p.Err(); err != nil {
		return fmt.Errorf("producing records: %w", err)
	}
	if err := p.p.Commit(ctx); err != nil {
		return fmt.Errorf("committing Kafka transaction of %q: %w", p.txnID, err)
	}
	return nil
}

func (p *producer) abort() {
	// The caller's context may be the cancelled one: aborting must still
	// reach the broker, or consumers wait for the transaction timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p.p.Abort(ctx)
}

func (p *producer) close() { p.p.Close() }

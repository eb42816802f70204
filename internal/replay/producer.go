package replay

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/route"
)

// producer is the sink of a real replay: one transactional producer whose
// Kafka transactions are opened by add and ended by commit or abort.
type producer struct {
	cl    *kgo.Client
	txnID string
	log   zerolog.Logger
	inTxn bool

	errMu    sync.Mutex
	firstErr error
}

var _ sink = (*producer)(nil)

// newProducer connects and initialises the transactional id. A previous
// producer with the same id is fenced and its open transaction aborted;
// the ids of replays are their own, so no router is affected.
func newProducer(ctx context.Context, cfg *Config) (*producer, error) {
	opts := append([]kgo.Opt{}, cfg.Kafka...)
	opts = append(opts,
		kgo.WithLogger(logging.Kgo(cfg.Logger)),
		kgo.TransactionalID(cfg.TransactionalID),
		kgo.TransactionTimeout(cfg.TransactionTimeout),
		kgo.RecordPartitioner(route.Partitioner()),
		kgo.MaxBufferedRecords(cfg.MaxBufferedRecords),
		kgo.MaxBufferedBytes(cfg.MaxBufferedBytes),
		kgo.ProducerBatchMaxBytes(int32(cfg.MaxMessageBytes)),
		kgo.ProducerLinger(0),
	)
	if cfg.AutoCreateTopics {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("initialising transactional producer %q: %w", cfg.TransactionalID,
			acl.Hint(err, "WRITE", acl.TransactionalID(cfg.TransactionalID)))
	}
	return &producer{cl: cl, txnID: cfg.TransactionalID, log: cfg.Logger}, nil
}

func (p *producer) add(ctx context.Context, rec *kgo.Record) error {
	if !p.inTxn {
		if err := p.cl.BeginTransaction(); err != nil {
			return fmt.Errorf("beginning Kafka transaction: %w", err)
		}
		p.inTxn = true
	}
	p.cl.Produce(ctx, rec, p.onProduced)
	return p.err()
}

func (p *producer) onProduced(rec *kgo.Record, err error) {
	if err == nil {
		return
	}
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if p.firstErr == nil {
		p.firstErr = describe(rec, err)
	}
}

func (p *producer) err() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.firstErr
}

func (p *producer) commit(ctx context.Context) error {
	if !p.inTxn {
		return nil
	}
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("flushing records: %w", err)
	}
	if err := p.err(); err != nil {
		return err
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("committing Kafka transaction of %q: %w", p.txnID, err)
	}
	p.inTxn = false
	return nil
}

func (p *producer) abort() {
	if !p.inTxn {
		return
	}
	// The caller's context may be the cancelled one: aborting must still
	// reach the broker, or consumers wait for the transaction timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		p.log.Warn().Err(err).Msg("aborting buffered records")
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		p.log.Warn().Err(err).Str("transactional_id", p.txnID).
			Msg("aborting Kafka transaction failed; the broker aborts it after the transaction timeout")
	}
	p.inTxn = false
}

func (p *producer) close() { p.cl.Close() }

// describe names the outbox row of a failed record by its headers.
func describe(rec *kgo.Record, err error) error {
	var id, txn string
	for _, h := range rec.Headers {
		switch h.Key {
		case route.HeaderID:
			id = string(h.Value)
		case route.HeaderBinlogGTID:
			txn = string(h.Value)
		}
	}
	return fmt.Errorf("producing event_id %s (transaction %s) to topic %s: %w", id, txn, rec.Topic,
		acl.Hint(err, "WRITE (and CREATE, unless the topic is created beforehand)", acl.Topic(rec.Topic)))
}

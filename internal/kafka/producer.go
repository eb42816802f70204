package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/route"
)

// Config configures a Producer. Every bound must be set: the callers own
// the defaults (the relay's Default* constants).
type Config struct {
	// Kafka are the connection options (seed brokers, client id,
	// compression, TLS, SASL).
	Kafka []kgo.Opt
	// TransactionalID makes the producer transactional; "" makes it
	// idempotent, without transactions.
	TransactionalID string
	// TransactionTimeout is the Kafka transaction timeout (transactional
	// only).
	TransactionTimeout time.Duration
	// MaxBufferedRecords and MaxBufferedBytes bound franz-go's buffer:
	// Produce blocks when it is full.
	MaxBufferedRecords int
	MaxBufferedBytes   int
	// MaxMessageBytes is the largest record batch sent (franz-go's
	// ProducerBatchMaxBytes), at most the brokers' message.max.bytes.
	MaxMessageBytes int
	// BatchMaxBytes, when set, is the largest record batch sent to a topic
	// (franz-go's ProducerBatchMaxBytesFn, asked when the producer first
	// learns the topic's partitions) instead of MaxMessageBytes: the
	// relay's limit of each topic (its max.message.bytes).
	BatchMaxBytes func(topic string) int32
	// AutoCreateTopics lets the client ask the brokers to create missing
	// topics.
	AutoCreateTopics bool
	// Logger receives franz-go's messages (logging.Kgo).
	Logger zerolog.Logger
	// Log receives the producer's own warnings (an abort that failed).
	Log zerolog.Logger
	// Partitions, if set, places records by the partition counts it
	// keeps (PartitionCounts), and the producer refreshes its metadata
	// every PartitionRefresh so that it sees a change promptly.
	Partitions *PartitionCounts
	// OnFailure, if set, sees every record that failed, with its error,
	// from franz-go's goroutines; it must be quick.
	OnFailure func(*kgo.Record, error)
}

func (c *Config) validate() error {
	if len(c.Kafka) == 0 {
		return errors.New("no Kafka connection options: set --kafka-brokers")
	}
	if c.MaxBufferedRecords <= 0 || c.MaxBufferedBytes <= 0 || c.MaxMessageBytes <= 0 {
		return fmt.Errorf("producer bounds must be positive: %d records, %d bytes buffered, %d bytes per batch",
			c.MaxBufferedRecords, c.MaxBufferedBytes, c.MaxMessageBytes)
	}
	if c.TransactionalID != "" && c.TransactionTimeout <= 0 {
		return fmt.Errorf("transactional producer %q without a transaction timeout", c.TransactionalID)
	}
	return nil
}

// metadataMinAge is the shortest time between two metadata requests of
// a producer client.
const metadataMinAge = 100 * time.Millisecond

// Producer is one franz-go producer client. Its methods other than
// Produce's promise handling are called from one goroutine.
type Producer struct {
	cl    *kgo.Client
	txnID string
	log   zerolog.Logger

	inTxn     bool
	began     time.Time // when the open transaction was begun, by the local clock
	onFailure func(*kgo.Record, error)

	mu          sync.Mutex
	firstErr    error
	flushCancel context.CancelFunc // ends the Flush in progress at the first failure
	promise     func(*kgo.Record, error)
}

// New creates the client; it connects lazily (Init, Produce).
func New(cfg Config) (*Producer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	opts := append([]kgo.Opt{}, cfg.Kafka...)
	opts = append(opts,
		kgo.WithLogger(logging.Kgo(cfg.Logger)),
		kgo.MaxBufferedRecords(cfg.MaxBufferedRecords),
		kgo.MaxBufferedBytes(cfg.MaxBufferedBytes),
		kgo.ProducerBatchMaxBytes(int32(cfg.MaxMessageBytes)),
		kgo.ProducerLinger(0),
		// A batch retried after a retriable error (NOT_LEADER_OR_FOLLOWER,
		// or CONCURRENT_TRANSACTIONS, which Apache Kafka's transaction
		// version 2 answers to the first produce of a transaction while the
		// previous one's markers are still being written) waits for a
		// metadata refresh; franz-go's default minimum age of 5 s stalled
		// such a transaction for up to 5 s. 100 ms is the Java client's
		// retry.backoff.ms.
		kgo.MetadataMinAge(metadataMinAge),
	)
	if cfg.Partitions != nil {
		opts = append(opts, kgo.RecordPartitioner(cfg.Partitions.partitioner()), kgo.MetadataMaxAge(PartitionRefresh))
	} else {
		opts = append(opts, kgo.RecordPartitioner(route.Partitioner()))
	}
	if cfg.BatchMaxBytes != nil {
		opts = append(opts, kgo.ProducerBatchMaxBytesFn(cfg.BatchMaxBytes))
	}
	if cfg.AutoCreateTopics {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	if cfg.TransactionalID != "" {
		opts = append(opts,
			kgo.TransactionalID(cfg.TransactionalID),
			kgo.TransactionTimeout(cfg.TransactionTimeout),
		)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	p := &Producer{cl: cl, txnID: cfg.TransactionalID, log: cfg.Log, onFailure: cfg.OnFailure}
	p.promise = p.onProduced
	return p, nil
}

// Init initialises the transactional producer id. Once it returns nil,
// every older producer with the same transactional id is fenced and its
// open transaction aborted: nothing it still commits becomes visible.
// For an idempotent producer it does nothing.
func (p *Producer) Init(ctx context.Context) error {
	if p.txnID == "" {
		return nil
	}
	if _, _, err := p.cl.ProducerID(ctx); err != nil {
		return fmt.Errorf("initialising transactional producer %q: %w", p.txnID, acl.Hint(err, "WRITE", acl.TransactionalID(p.txnID)))
	}
	return nil
}

// Begin opens a Kafka transaction unless one is open; for an idempotent
// producer it does nothing.
func (p *Producer) Begin() error {
	if p.txnID == "" || p.inTxn {
		return nil
	}
	if err := p.cl.BeginTransaction(); err != nil {
		return fmt.Errorf("beginning Kafka transaction: %w", err)
	}
	p.inTxn, p.began = true, time.Now()
	return nil
}

// Began returns when the open transaction was begun, by the local clock,
// and false when none is open. The broker starts its transaction timer
// later (when the first partition is added), so a transaction younger
// than the timeout by this time cannot have timed out.
func (p *Producer) Began() (time.Time, bool) { return p.began, p.inTxn }

// Produce hands rec to franz-go without waiting for its acknowledgement;
// it blocks while the buffer is full, until ctx ends. A failure is kept
// for Err and ends a Flush in progress. rec's bytes must stay unchanged
// until it is acknowledged.
func (p *Producer) Produce(ctx context.Context, rec *kgo.Record) {
	p.cl.Produce(ctx, rec, p.promise)
}

func (p *Producer) onProduced(rec *kgo.Record, err error) {
	if err == nil {
		return
	}
	if p.onFailure != nil {
		p.onFailure(rec, err)
	}
	p.mu.Lock()
	if p.firstErr == nil {
		p.firstErr = Describe(rec, err)
	}
	if p.flushCancel != nil {
		p.flushCancel() // no flush can succeed now; fail it at once
	}
	p.mu.Unlock()
}

// Err returns the first record failure, naming the record (Describe), or
// nil. A failure is final for the producer: every later Err returns it.
func (p *Producer) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.firstErr
}

// Flush blocks until every record produced so far is acknowledged or one
// failed (see Err), or ctx ends (its error). It returns nil at once when a
// record already failed. A nil return with Err nil means every record
// produced so far is durable (in a transaction: until Commit or Abort).
func (p *Producer) Flush(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.mu.Lock()
	p.flushCancel = cancel
	failed := p.firstErr != nil
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.flushCancel = nil
		p.mu.Unlock()
	}()
	if failed {
		return nil
	}
	err := p.cl.Flush(ctx)
	if p.Err() != nil {
		return nil // ended by the failure, which Err reports
	}
	return err
}

// Commit ends the open transaction with a commit; call it after a Flush
// that left Err nil. When it returns nil the coordinator has decided to
// commit: every record produced in the transaction becomes visible to
// read_committed consumers once the broker has written its commit
// markers, which it does after the reply. On an error the
// transaction stays open here (Abort or Drop it): the outcome is unknown
// when Retriable(err), and the records are lost to a fence or timeout
// when StaleEpoch(err).
func (p *Producer) Commit(ctx context.Context) error {
	if !p.inTxn {
		return nil
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return err
	}
	p.inTxn = false
	return nil
}

// Abort drops the buffered records and ends the open transaction with an
// abort, so that none of its records become visible; failures are logged
// (the broker aborts the transaction after its timeout). It does nothing
// when no transaction is open.
func (p *Producer) Abort(ctx context.Context) {
	if !p.inTxn {
		return
	}
	if err := p.cl.AbortBufferedRecords(ctx); err != nil {
		p.log.Warn().Err(err).Msg("aborting buffered records")
	}
	if err := p.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		p.log.Warn().Err(err).Msg("aborting Kafka transaction")
	}
	p.inTxn = false
}

// Drop drops the buffered records and forgets the open transaction
// without ending it at the broker, for a producer whose epoch is stale
// (StaleEpoch): an abort would only fail or, through franz-go's KIP-588
// recovery, bump the epoch and fence the producer that took over. The
// broker, or the next producer's Init, aborts the transaction.
func (p *Producer) Drop(ctx context.Context) {
	if !p.inTxn {
		return
	}
	_ = p.cl.AbortBufferedRecords(ctx)
	p.inTxn = false
}

// Buffered is the number of records produced and not yet acknowledged.
func (p *Producer) Buffered() int64 { return p.cl.BufferedProduceRecords() }

// Close closes the client; records still buffered fail.
func (p *Producer) Close() { p.cl.Close() }

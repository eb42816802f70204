package relay

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/txnproducer"
)

// kafka is what an active session needs from the brokers besides its
// Sink. brokers is the implementation; the relay's unit tests use a fake
// that keeps committed records in memory.
type kafka interface {
	// ensureCheckpointTopic creates the checkpoint topic if it is missing
	// and checks that it is compacted.
	ensureCheckpointTopic(ctx context.Context) error
	// loadCheckpoint returns the router's latest committed checkpoint, or
	// an error wrapping checkpoint.ErrCheckpointMissing. Called after the
	// producer's Init, it first waits until every transaction that wrote
	// to the checkpoint partition before it has ended there
	// (checkpoint.Settle).
	loadCheckpoint(ctx context.Context) (*checkpoint.Checkpoint, error)
	// newLimits creates the session's record batch limits (limits.go);
	// close them when the session ends.
	newLimits() (*topicLimits, error)
	// newSink creates the session's producer (not yet initialised), whose
	// record batches for a topic are at most batchMax(topic) bytes.
	newSink(batchMax func(topic string) int32) (Sink, error)
}

// brokers reaches the Kafka cluster of Config.Kafka.
type brokers struct {
	cfg    *Config
	log    zerolog.Logger
	failed func(*kgo.Record, error) // sees every record that failed (timestampGuard.note)
}

// ensureCheckpointTopic uses its own client: the producer's may create
// topics automatically on a metadata request, with the broker's default
// (deleting) cleanup policy.
func (b brokers) ensureCheckpointTopic(ctx context.Context) error {
	cl, err := kgo.NewClient(b.cfg.Kafka...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return checkpoint.EnsureTopic(ctx, kadm.NewClient(cl), b.cfg.CheckpointTopic)
}

func (b brokers) loadCheckpoint(ctx context.Context) (*checkpoint.Checkpoint, error) {
	st, err := checkpoint.Settle(ctx, b.cfg.CheckpointTopic, settleWait(b.cfg.TransactionTimeout), b.cfg.Kafka...)
	if err != nil {
		return nil, err
	}
	if st.Waited > 0 {
		b.log.Info().Int64("stable_offset", st.FirstStable).Int64("high_watermark", st.HighWatermark).Dur("waited", st.Waited).
			Msg("the checkpoint partition had a transaction open; read the checkpoint once it ended")
	}
	return checkpoint.Load(ctx, b.cfg.CheckpointTopic, b.cfg.Name, b.cfg.Kafka...)
}

// newLimits reads the limits with a client of its own (DescribeConfigs,
// and the metadata request that creates a missing topic).
func (b brokers) newLimits() (*topicLimits, error) {
	cl, err := kgo.NewClient(b.cfg.Kafka...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	l := newTopicLimits(b.cfg.MaxMessageBytes, *b.cfg.AutoCreateTopics, b.log)
	l.setClient(cl)
	return l, nil
}

func (b brokers) newSink(batchMax func(topic string) int32) (Sink, error) {
	pc := producerConfig(b.cfg, b.log)
	pc.BatchMaxBytes = batchMax
	pc.OnFailure = b.failed
	return txnproducer.New(pc)
}

// producerConfig is the producer of a router: transactional with the
// router's id (exactly-once) or idempotent (at-least-once).
func producerConfig(cfg *Config, log zerolog.Logger) txnproducer.Config {
	pc := txnproducer.Config{
		Kafka:              cfg.Kafka,
		MaxBufferedRecords: cfg.MaxBufferedRecords,
		MaxBufferedBytes:   cfg.MaxBufferedBytes,
		MaxMessageBytes:    cfg.MaxMessageBytes,
		AutoCreateTopics:   *cfg.AutoCreateTopics,
		Logger:             cfg.Logger,
		Log:                log,
	}
	if cfg.Delivery == ExactlyOnce {
		pc.TransactionalID, pc.TransactionTimeout = TransactionalID(cfg.Name), cfg.TransactionTimeout
	}
	return pc
}

// settleWait is how long a session waits for the checkpoint partition's
// open transactions to end before it reads the checkpoint: its own
// previous transaction ends as soon as its markers are written, another
// router's sharing the topic at most at its transaction timeout, which
// Apache Kafka enforces within
// transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s).
func settleWait(txnTimeout time.Duration) time.Duration { return txnTimeout + 15*time.Second }

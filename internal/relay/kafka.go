package relay

import (
	"context"

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
	// an error wrapping checkpoint.ErrCheckpointMissing.
	loadCheckpoint(ctx context.Context) (*checkpoint.Checkpoint, error)
	// newSink creates the session's producer (not yet initialised).
	newSink() (Sink, error)
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
	return checkpoint.Load(ctx, b.cfg.CheckpointTopic, b.cfg.Name, b.cfg.Kafka...)
}

func (b brokers) newSink() (Sink, error) {
	pc := producerConfig(b.cfg, b.log)
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

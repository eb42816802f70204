package relay

import (
	"context"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// cluster is what an active session needs from the brokers besides its
// Sink. brokers is the implementation; the relay's unit tests use a fake
// that keeps committed records in memory.
type cluster interface {
	// ensureCheckpointTopic creates the checkpoint topic if it is missing
	// and checks that it is compacted.
	ensureCheckpointTopic(ctx context.Context) error
	// loadCheckpoint returns the router's latest committed checkpoint, or
	// an error wrapping checkpoint.ErrCheckpointMissing. Called after the
	// producer's Init, it first waits until every transaction that wrote
	// to the checkpoint partition before it has ended there
	// (kafka.Settle).
	loadCheckpoint(ctx context.Context) (*checkpoint.Checkpoint, error)
	// newLimits creates the session's record batch limits (kafka.TopicLimits);
	// close them when the session ends.
	newLimits() (*kafka.TopicLimits, error)
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
	adm, err := kafka.NewAdmin(b.cfg.Kafka...)
	if err != nil {
		return err
	}
	defer adm.Close()
	return kafka.EnsureCheckpointTopic(ctx, adm, b.cfg.CheckpointTopic)
}

func (b brokers) loadCheckpoint(ctx context.Context) (*checkpoint.Checkpoint, error) {
	st, err := kafka.Settle(ctx, b.cfg.CheckpointTopic, settleWait(b.cfg.TransactionTimeout), b.cfg.Kafka...)
	if err != nil {
		return nil, err
	}
	if st.Waited > 0 {
		b.log.Info().Int64("stable_offset", st.FirstStable).Int64("high_watermark", st.HighWatermark).Dur("waited", st.Waited).
			Msg("the checkpoint partition had a transaction open; read the checkpoint once it ended")
	}
	return kafka.LoadCheckpoint(ctx, b.cfg.CheckpointTopic, b.cfg.Name, b.cfg.Kafka...)
}

func (b brokers) newLimits() (*kafka.TopicLimits, error) {
	return kafka.OpenTopicLimits(b.cfg.MaxMessageBytes, *b.cfg.AutoCreateTopics, b.log, b.cfg.Kafka...)
}

func (b brokers) newSink(batchMax func(topic string) int32) (Sink, error) {
	pc := producerConfig(b.cfg, b.log)
	pc.BatchMaxBytes = batchMax
	pc.OnFailure = b.failed
	return kafka.New(pc)
}

// producerConfig is the producer of a router: transactional with the
// router's id (exactly-once) or idempotent (at-least-once).
func producerConfig(cfg *Config, log zerolog.Logger) kafka.Config {
	pc := kafka.Config{
		Kafka:              cfg.Kafka,
		MaxBufferedRecords: cfg.MaxBufferedRecords,
		MaxBufferedBytes:   cfg.MaxBufferedBytes,
		MaxMessageBytes:    cfg.MaxMessageBytes,
		AutoCreateTopics:   *cfg.AutoCreateTopics,
		Logger:             cfg.Logger,
		Log:                log,
	}
	if cfg.Delivery == ExactlyOnce {
		pc.TransactionalID, pc.TransactionTimeout = kafka.TransactionalID(cfg.Name), cfg.TransactionTimeout
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

package relay

import (
	"context"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
)

// cluster is what the relay needs from the brokers: the checkpoint topic
// before an election, and a pipeline.Sink per active session. brokers is the
// implementation; the relay's unit tests use a fake that keeps committed
// records in memory.
type cluster interface {
	// ensureCheckpointTopic creates the checkpoint topic if it is missing
	// and checks that it is compacted.
	ensureCheckpointTopic(ctx context.Context) error
	// newSink creates the session's pipeline.Sink (not yet open).
	newSink() (pipeline.Sink, error)
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

func (b brokers) newSink() (pipeline.Sink, error) {
	pc := producerConfig(b.cfg, b.log)
	pc.OnFailure = b.failed
	sc := kafka.SessionConfig{Producer: pc, Name: b.cfg.Name, CheckpointTopic: b.cfg.CheckpointTopic,
		SettleWait: settleWait(b.cfg.TransactionTimeout), OnRepaired: b.cfg.Metrics.TransactionRepaired, Log: b.log,
		OtherWriters: []string{kafka.RecoveryTransactionalID(b.cfg.Name)}}
	if b.cfg.Delivery == ExactlyOnce {
		sc.TransactionalIDs = kafka.TransactionalIDs(b.cfg.Name, b.cfg.KafkaTransactions)
	}
	s, err := kafka.NewSession(sc)
	if err != nil {
		return nil, err
	}
	b.cfg.Metrics.BufferedFrom(s.Buffered)
	return s, nil
}

// producerConfig is the producer of a router; the session makes it
// transactional (exactly-once) or idempotent (at-least-once).
func producerConfig(cfg *Config, log zerolog.Logger) kafka.Config {
	pc := kafka.Config{
		Kafka:              cfg.Kafka,
		MaxBufferedRecords: cfg.MaxBufferedRecords,
		MaxBufferedBytes:   cfg.MaxBufferedBytes,
		MaxMessageBytes:    cfg.MaxMessageBytes,
		AutoCreateTopics:   *cfg.AutoCreateTopics,
		Partitions:         cfg.Partitions,
		Logger:             cfg.Logger,
		Log:                log,
	}
	if cfg.Delivery == ExactlyOnce {
		pc.TransactionTimeout = cfg.TransactionTimeout
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

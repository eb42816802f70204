package pipeline

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// Sink is the Kafka side of one active session: a producer, transactional
// (exactly-once) or idempotent (at-least-once), the topics' record batch
// limits, and the checkpoint topic. *kafka.Session is the implementation
// (for a pass, one with NoCheckpoint; a dry run's sink prints instead of
// producing); pipelinetest.Sink is the loop's and the relay's tests'
// session in memory. Its methods are called from the loop's goroutine
// only.
type Sink interface {
	// Open starts the session and returns the router's last committed
	// checkpoint, or nil when none is stored. Once it returns nil error,
	// every older producer of the router's transactional id is fenced and
	// its open transaction aborted, and every transaction that wrote to
	// the checkpoint partition before Open has ended there: nothing an
	// older producer still commits becomes visible, so the checkpoint is
	// final. On error nothing was produced.
	Open(ctx context.Context) (*checkpoint.Checkpoint, error)

	// Produce hands rec over without waiting for its acknowledgement,
	// beginning a Kafka transaction if none is open (exactly-once). It
	// blocks while the producer's buffer is full, until ctx ends. A
	// record that fails is returned by the next Commit or Close. rec's
	// bytes must stay unchanged until it is acknowledged.
	//
	// A record that cannot fit in a batch of its topic alone is not
	// produced: a *kafka.TooLargeError (kafka.TopicLimits.Check) is
	// returned, and the session goes on. Any other error ends the
	// session: the topic's limit could not be read, the transaction could
	// not begin, or a topic's partition count changed under
	// kafka.PartitionFail (a kafka.PartitionChangeError, before rec is
	// produced).
	Produce(ctx context.Context, rec *kgo.Record) error

	// Commit makes every record produced since the last Commit durable
	// together with cp. Exactly-once: cp is written in the same Kafka
	// transaction, which is committed; when Commit returns nil, the
	// records and cp are visible to read_committed consumers, atomically.
	// At-least-once: once the records are acknowledged, cp is produced
	// without waiting for its own acknowledgement, which the next Commit
	// or Close waits for. On error nothing is known to be committed: a
	// record that failed (named by its event id and transaction), records
	// not acknowledged before ctx ended (kafka.ErrNotAcknowledged), or a
	// commit whose outcome only the next session learns
	// (kafka.ErrCommitUnknown), or a partition count change met by a
	// record since the last Commit under kafka.PartitionFail
	// (kafka.PartitionChangeError, before anything is committed). The
	// session then ends with Abort.
	Commit(ctx context.Context, cp *checkpoint.Checkpoint) error

	// Abort ends the session's open transaction without committing it,
	// after the error cause: none of its records becomes visible to
	// read_committed consumers. For a stale producer epoch
	// (kafka.StaleEpoch) it only forgets the transaction, as an abort
	// would fence the instance that took over; the broker or the next
	// session aborts it. Buffered records are dropped. Failures are
	// logged: the broker aborts the transaction after its timeout.
	Abort(ctx context.Context, cause error)

	// Close waits until every record produced is acknowledged (the last
	// at-least-once checkpoint), or one failed, or ctx ends, and returns
	// that error; then it releases the clients. A second Close does
	// nothing.
	Close(ctx context.Context) error
}

var _ Sink = (*kafka.Session)(nil)

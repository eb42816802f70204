package relay

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/pipeline"
)

// reportingSink passes every call on to a pipeline.Sink and reports its open Kafka
// transaction (exactly-once) to Metrics (KafkaTransaction) when one
// begins or ends, so that the transaction's age can be read while the
// relay goroutine is blocked in a commit.
type reportingSink struct {
	pipeline.Sink
	transactional bool
	m             Metrics
	began         time.Time // when the open transaction began; zero: none open
}

func reportTransactions(s pipeline.Sink, transactional bool, m Metrics) *reportingSink {
	return &reportingSink{Sink: s, transactional: transactional, m: m}
}

// set reports a change of the open transaction's begin time.
func (s *reportingSink) set(began time.Time) {
	if s.transactional && !began.Equal(s.began) {
		s.began = began
		s.m.KafkaTransaction(began)
	}
}

// Produce reports the transaction its first record begins.
func (s *reportingSink) Produce(ctx context.Context, rec *kgo.Record) error {
	if s.began.IsZero() {
		s.set(time.Now())
	}
	return s.Sink.Produce(ctx, rec)
}

// Commit reports the transaction ended once committed: a failed commit
// leaves it open until Abort, its age still growing.
func (s *reportingSink) Commit(ctx context.Context, cp *checkpoint.Checkpoint) error {
	if err := s.Sink.Commit(ctx, cp); err != nil {
		return err
	}
	s.set(time.Time{})
	return nil
}

func (s *reportingSink) Abort(ctx context.Context, cause error) {
	s.Sink.Abort(ctx, cause)
	s.set(time.Time{})
}

// Close reports that no transaction is open: the session is over, and
// the next one's producer aborts what this one left open.
func (s *reportingSink) Close(ctx context.Context) error {
	err := s.Sink.Close(ctx)
	s.set(time.Time{})
	return err
}

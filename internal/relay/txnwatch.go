package relay

import (
	"context"
	"time"
)

// reportingSink passes every call on to a Sink and reports its open Kafka
// transaction to Metrics (KafkaTransaction) when one is begun or ended,
// so that the transaction's age can be read while the relay goroutine is
// blocked in a flush or a commit.
type reportingSink struct {
	Sink
	m        Metrics
	reported time.Time // the begin time last reported; zero: none open
}

func reportTransactions(s Sink, m Metrics) *reportingSink {
	return &reportingSink{Sink: s, m: m}
}

// report tells Metrics about a change of the open transaction. It only
// compares times when nothing changed, so Begin may call it for every
// record.
func (s *reportingSink) report() {
	began, open := s.Sink.Began()
	if !open {
		began = time.Time{}
	}
	if !began.Equal(s.reported) {
		s.reported = began
		s.m.KafkaTransaction(began)
	}
}

func (s *reportingSink) Begin() error {
	defer s.report()
	return s.Sink.Begin()
}

// Commit reports after the commit: a failed one leaves the transaction
// open (Sink.Commit), its age still growing.
func (s *reportingSink) Commit(ctx context.Context) error {
	defer s.report()
	return s.Sink.Commit(ctx)
}

func (s *reportingSink) Abort(ctx context.Context) {
	defer s.report()
	s.Sink.Abort(ctx)
}

func (s *reportingSink) Drop(ctx context.Context) {
	defer s.report()
	s.Sink.Drop(ctx)
}

// Close reports that no transaction is open: the session is over, and
// the next one's producer aborts what this one left open.
func (s *reportingSink) Close() {
	s.Sink.Close()
	if !s.reported.IsZero() {
		s.reported = time.Time{}
		s.m.KafkaTransaction(time.Time{})
	}
}

package relay

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestFencedTellsTimeoutFromTakeover(t *testing.T) {
	wrapped := func(e error) error { return fmt.Errorf("committing Kafka transaction: %w", e) }
	cases := []struct {
		name   string
		err    error
		inTxn  bool
		age    time.Duration
		want   error // nil: not a stale epoch
		retry  bool
		aloOff bool
	}{
		{"young transaction fenced", wrapped(kerr.ProducerFenced), true, time.Second, ErrFenced, false, false},
		{"produce with a stale epoch", wrapped(kerr.InvalidProducerEpoch), true, 2 * time.Second, ErrFenced, false, false},
		{"timed out: producer fenced", wrapped(kerr.ProducerFenced), true, 11 * time.Second, ErrTransactionTimedOut, true, false},
		{"timed out: invalid txn state", wrapped(kerr.InvalidTxnState), true, 10 * time.Second, ErrTransactionTimedOut, true, false},
		{"no transaction open", wrapped(kerr.InvalidProducerEpoch), false, time.Minute, ErrFenced, false, false},
		{"other error", wrapped(kerr.NotLeaderForPartition), true, time.Minute, nil, true, false},
		{"at-least-once", wrapped(kerr.InvalidProducerEpoch), true, time.Minute, nil, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Relay{cfg: Config{Name: "n", Delivery: ExactlyOnce}}
			r.cfg.TransactionTimeout = 10 * time.Second
			if c.aloOff {
				r.cfg.Delivery = AtLeastOnce
			}
			records := 0
			if c.inTxn {
				records = 1
			}
			got := r.fenced(c.err, records, time.Now().Add(-c.age))
			switch {
			case c.want == nil && got != nil:
				t.Fatalf("fenced(%v) = %v, want nil", c.err, got)
			case c.want != nil && !errors.Is(got, c.want):
				t.Fatalf("fenced(%v) = %v, want %v", c.err, got, c.want)
			}
			if got == nil {
				return
			}
			if !errors.Is(got, errors.Unwrap(c.err)) {
				t.Errorf("%v does not wrap the broker's error", got)
			}
			if retriableKafka(got) != c.retry {
				t.Errorf("retriableKafka(%v) = %v, want %v", got, !c.retry, c.retry)
			}
		})
	}
}

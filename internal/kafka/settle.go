package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
)

// ErrUnsettled means a transaction that wrote to the checkpoint topic's
// partition stayed open, neither committed nor aborted there, for the
// whole wait of Settle: its outcome is not known, so no checkpoint
// may be read yet.
var ErrUnsettled = errors.New("a transaction on the checkpoint partition is neither committed nor aborted")

// settlePoll is the time between two reads of the partition's offsets.
const settlePoll = 50 * time.Millisecond

// Settled says what Settle found.
type Settled struct {
	// HighWatermark is the partition's high watermark when Settle began;
	// FirstStable its last stable offset at the first look.
	HighWatermark, FirstStable int64
	// Waited is how long the last stable offset took to reach
	// HighWatermark (zero when it already had).
	Waited time.Duration
}

// Settle returns once every transaction that wrote to the checkpoint
// topic's partition before the call has ended there: it reads the
// partition's high watermark, then waits until its last stable offset
// has reached it, for at most within (then an error wrapping
// ErrUnsettled that names the offset it stopped at). Load after it
// returns the checkpoint those transactions decided.
//
// A new session of the router calls it after initialising its
// transactional producer id. InitProducerId returns only once the
// coordinator has completed the id's previous transaction (committed or
// aborted), but the outcome becomes visible to read_committed readers
// when the transaction's marker is written to the partition, which
// Apache Kafka does after the coordinator answers and, after a broker
// restart, after the coordinator reloads. Until then the last stable
// offset stops before the transaction's checkpoint record, and Load
// would return the checkpoint before it: a committed transaction whose
// rows would be published again. Waiting for the high watermark read
// after the initialisation covers every transaction of the previous
// sessions, whatever their outcome.
func Settle(ctx context.Context, topic string, within time.Duration, opts ...kgo.Opt) (Settled, error) {
	var st Settled
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return st, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if st.HighWatermark, err = partitionOffset(ctx, adm.ListEndOffsets, topic); err != nil {
		return st, err
	}
	began := time.Now()
	for first := true; ; first = false {
		lso, err := partitionOffset(ctx, adm.ListCommittedOffsets, topic)
		if err != nil {
			return st, err
		}
		if first {
			st.FirstStable = lso
		}
		if lso >= st.HighWatermark {
			st.Waited = time.Since(began)
			if first {
				st.Waited = 0
			}
			return st, nil
		}
		if time.Since(began) > within {
			return st, fmt.Errorf("%w: checkpoint topic %q partition 0 is stable only up to offset %d of %d after %s%s; "+
				"if it stays so, the transaction's marker was never written to the partition (a hanging transaction, which "+
				"kafka-transactions.sh find-hanging names). Its outcome decides which checkpoint is the router's, so the router "+
				"does not read past it; aborting it (kafka-transactions.sh abort) makes the router resume from the checkpoint "+
				"before it, publishing again the rows of that transaction if the outbox topics have them",
				ErrUnsettled, topic, lso, st.HighWatermark, within, openProducers(ctx, adm, topic))
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("waiting for checkpoint topic %q to settle at offset %d (stable up to %d): %w", topic, st.HighWatermark, lso, ctx.Err())
		case <-time.After(settlePoll):
		}
	}
}

// partitionOffset returns partition 0's offset as list reports it: the
// high watermark (ListEndOffsets) or the last stable offset
// (ListCommittedOffsets).
func partitionOffset(ctx context.Context, list func(context.Context, ...string) (kadm.ListedOffsets, error), topic string) (int64, error) {
	listed, err := list(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("reading offsets of checkpoint topic %q: %w", topic, acl.Hint(err, "READ", acl.Topic(topic)))
	}
	o, ok := listed.Lookup(topic, 0)
	if !ok || o.Err != nil {
		if ok {
			err = o.Err
		}
		return 0, fmt.Errorf("checkpoint topic %q has no partition 0: %v", topic, err)
	}
	return o.Offset, nil
}

// openProducers names the producers with a transaction open on topic's
// partition 0, as DescribeProducers reports them, for an error message;
// "" when none is found or they cannot be described.
func openProducers(ctx context.Context, adm *kadm.Client, topic string) string {
	ps, err := adm.DescribeProducers(ctx, kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		return ""
	}
	var open []string
	ps.EachProducer(func(p kadm.DescribedProducer) {
		if p.CurrentTxnStartOffset >= 0 {
			open = append(open, fmt.Sprintf("producer id %d epoch %d from offset %d", p.ProducerID, p.ProducerEpoch, p.CurrentTxnStartOffset))
		}
	})
	if len(open) == 0 {
		return ""
	}
	return " (a transaction open: " + strings.Join(open, ", ") + ")"
}

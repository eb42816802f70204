package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
)

// ErrUnsettled means a transaction that wrote to the checkpoint topic's
// partition stayed open, neither committed nor aborted there, for the
// whole wait of LoadSettled: its outcome is not known, so no checkpoint
// may be read yet.
var ErrUnsettled = errors.New("a transaction on the checkpoint partition is neither committed nor aborted")

// settlePoll is the time between two reads of the partition's offsets.
const settlePoll = 50 * time.Millisecond

// LoadSettled is Load after every transaction that wrote to the
// checkpoint partition before the call has ended there: it reads the
// partition's high watermark, then waits until its last stable offset
// has reached it, for at most within (then an error wrapping
// ErrUnsettled that names the offset it stopped at).
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
func LoadSettled(ctx context.Context, topic, name string, within time.Duration, opts ...kgo.Opt) (*Checkpoint, error) {
	if err := settle(ctx, topic, within, opts...); err != nil {
		return nil, err
	}
	return Load(ctx, topic, name, opts...)
}

// settle waits until partition 0 of topic has no transaction open below
// the high watermark it reads first.
func settle(ctx context.Context, topic string, within time.Duration, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	hwm, err := partitionOffset(ctx, adm.ListEndOffsets, topic)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(within)
	var lso int64
	for {
		lso, err = partitionOffset(ctx, adm.ListCommittedOffsets, topic)
		if err != nil {
			return err
		}
		if lso >= hwm {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: checkpoint topic %q partition 0 is stable only up to offset %d of %d after %s; "+
				"if it stays so, a transaction's commit markers were never written (a hanging transaction): "+
				"kafka-transactions.sh find-hanging names it", ErrUnsettled, topic, lso, hwm, within)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for checkpoint topic %q to settle at offset %d (stable up to %d): %w", topic, hwm, lso, ctx.Err())
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

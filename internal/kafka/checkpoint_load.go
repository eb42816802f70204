package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// Load returns the latest committed checkpoint stored for name in topic.
// opts are the connection options (brokers, TLS, SASL) of a client that
// Load creates and closes. checkpoint.ErrCheckpointMissing is returned when there is
// none. A concurrently open transaction is not waited for.
func LoadCheckpoint(ctx context.Context, topic, name string, opts ...kgo.Opt) (*checkpoint.Checkpoint, error) {
	adm, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	end, err := partitionOffset(ctx, kadm.NewClient(adm).ListCommittedOffsets, topic)
	if err != nil {
		return nil, err
	}
	start, err := partitionOffset(ctx, kadm.NewClient(adm).ListStartOffsets, topic)
	if err != nil {
		return nil, err
	}
	if end <= start {
		return nil, fmt.Errorf("%w for %q in topic %q", checkpoint.ErrCheckpointMissing, name, topic)
	}

	cl, err := kgo.NewClient(append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(100*time.Millisecond),
	)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var last []byte
	for {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading checkpoint topic %q: %w", topic, err)
		}
		var fetchErr error
		fetches.EachError(func(_ string, _ int32, err error) { fetchErr = err })
		if fetchErr != nil && !errors.Is(fetchErr, context.Canceled) {
			return nil, fmt.Errorf("reading checkpoint topic %q: %w", topic, acl.Hint(fetchErr, "READ", acl.Topic(topic)))
		}
		done := false
		fetches.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() && string(r.Key) == name {
				last = r.Value
			}
			if r.Offset >= end-1 {
				done = true
			}
		})
		if done {
			break
		}
	}
	if last == nil {
		return nil, fmt.Errorf("%w for %q in topic %q", checkpoint.ErrCheckpointMissing, name, topic)
	}
	return checkpoint.Decode(last)
}

package inbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (c *Consumer) assigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for topic, ps := range assigned {
		for _, p := range ps {
			key := topicPartition{topic, p}
			if c.parts[key] != nil {
				continue
			}
			w := &partitionWork{}
			w.ctx, w.cancel = context.WithCancel(c.base)
			c.parts[key] = w
		}
	}
	c.log.Info().Interface("partitions", assigned).Msg("partitions assigned")
}

// revoked drains the revoked partitions (the current event's transaction
// ends, retries stop) and commits their handled offsets before the group
// gives them to another member.
func (c *Consumer) revoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	if c.cfg.Hooks.OnRevoked != nil {
		c.cfg.Hooks.OnRevoked(revoked)
	}
	keys := c.drain(revoked)
	cctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := c.commit(cctx, keys); err != nil {
		c.log.Warn().Err(err).Interface("partitions", revoked).Msg("committing revoked partitions failed; their handled events will be redelivered as duplicates")
	}
	c.forget(keys)
	c.log.Info().Interface("partitions", revoked).Msg("partitions revoked")
}

// lost drains lost partitions; their offsets can no longer be committed,
// so the new owner redelivers those events (duplicates, skipped).
func (c *Consumer) lost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	c.forget(c.drain(lost))
	c.log.Warn().Interface("partitions", lost).Msg("partitions lost")
}

func (c *Consumer) drain(m map[string][]int32) map[topicPartition]bool {
	keys := map[topicPartition]bool{}
	var works []*partitionWork
	c.mu.Lock()
	for topic, ps := range m {
		for _, p := range ps {
			key := topicPartition{topic, p}
			keys[key] = true
			if w := c.parts[key]; w != nil {
				w.cancel()
				works = append(works, w)
				delete(c.parts, key)
			}
		}
	}
	c.mu.Unlock()
	for _, w := range works {
		w.wg.Wait()
	}
	return keys
}

func (c *Consumer) forget(keys map[topicPartition]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range keys {
		delete(c.pending, k)
	}
}

// commit commits the pending offsets of keys (all when keys is nil) and
// removes those that did not move meanwhile.
func (c *Consumer) commit(ctx context.Context, keys map[topicPartition]bool) error {
	offsets := map[string]map[int32]kgo.EpochOffset{}
	taken := map[topicPartition]kgo.EpochOffset{}
	c.mu.Lock()
	for k, o := range c.pending {
		if keys != nil && !keys[k] {
			continue
		}
		if offsets[k.topic] == nil {
			offsets[k.topic] = map[int32]kgo.EpochOffset{}
		}
		offsets[k.topic][k.partition] = o
		taken[k] = o
	}
	c.mu.Unlock()
	if len(taken) == 0 {
		return nil
	}
	var errs []error
	c.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if perr := kerr.ErrorForCode(p.ErrorCode); perr != nil {
					errs = append(errs, fmt.Errorf("%s/%d: %w", t.Topic, p.Partition, perr))
				}
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("inbox: committing offsets: %w", err)
	}
	c.mu.Lock()
	for k, o := range taken {
		if c.pending[k] == o {
			delete(c.pending, k)
		}
	}
	c.mu.Unlock()
	return nil
}

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
	if c.cfg.Hooks.OnAssigned != nil {
		c.cfg.Hooks.OnAssigned(assigned)
	}
	c.mu.Lock()
	for topic, ps := range assigned {
		for _, p := range ps {
			key := topicPartition{topic, p}
			if c.parts[key] == nil {
				c.parts[key] = newPartition(c.base, key)
			}
		}
	}
	c.mu.Unlock()
	if len(assigned) > 0 {
		c.log.Info().Interface("partitions", assigned).Msg("partitions assigned")
	}
}

// revoked drains the revoked partitions before the group gives them to
// another member: nothing more is taken from their backlogs, a pending
// retry is dropped, the event in progress on each is waited for; then
// their handled offsets are committed and they are forgotten. The other
// partitions keep flowing meanwhile.
func (c *Consumer) revoked(_ context.Context, cl *kgo.Client, revoked map[string][]int32) {
	if c.cfg.Hooks.OnRevoked != nil {
		c.cfg.Hooks.OnRevoked(revoked)
	}
	if err := c.giveUp(cl, c.lookup(revoked), false, true); err != nil {
		c.log.Warn().Err(err).Interface("partitions", revoked).Msg("committing revoked partitions failed; their handled events will be redelivered as duplicates")
	}
	if len(revoked) > 0 {
		c.log.Info().Interface("partitions", revoked).Msg("partitions revoked")
	}
}

// lost stops the work on lost partitions at once (the session expired, so
// another member may own them already); their offsets can no longer be
// committed, so the new owner redelivers the events handled since the last
// commit (duplicates, skipped).
func (c *Consumer) lost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	_ = c.giveUp(cl, c.lookup(lost), true, false)
	if len(lost) > 0 {
		c.log.Warn().Interface("partitions", lost).Msg("partitions lost")
	}
}

// lookup returns the partitions of m that are assigned.
func (c *Consumer) lookup(m map[string][]int32) []*partition {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []*partition
	for topic, parts := range m {
		for _, n := range parts {
			if p := c.parts[topicPartition{topic, n}]; p != nil {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// giveUp stops the work on ps: nothing more is taken from the poll or
// their backlogs, a pending retry is dropped, and the event in progress is
// waited for; with cancel its context is cancelled first (its transaction
// rolls back unless it committed already). Then, holding commitMu so that
// no earlier commit can land after the hand-over, it commits their handled
// offsets (if commit) and forgets them.
func (c *Consumer) giveUp(cl *kgo.Client, ps []*partition, cancel, commit bool) error {
	if len(ps) == 0 {
		return nil
	}
	c.mu.Lock()
	for _, p := range ps {
		p.gone = true
		if cancel {
			p.cancel()
		}
		if p.retry != nil {
			p.retry.Stop()
			p.retry = nil
		}
		if p.state == ready || p.state == waiting {
			p.state = idle
		}
	}
	c.ready = removeGone(c.ready)
	for _, p := range ps {
		for p.state == running {
			c.idle.Wait()
		}
		p.cancel()
	}
	c.mu.Unlock()

	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	var err error
	if commit {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		err = c.commit(ctx, cl, ps)
		cancel()
	}
	c.mu.Lock()
	tps := map[string][]int32{}
	for _, p := range ps {
		if c.parts[p.key] == p {
			delete(c.parts, p.key)
		}
		p.backlog = nil
		c.m.deleteLag(p.key.topic, p.key.partition)
		if p.paused {
			tps[p.key.topic] = append(tps[p.key.topic], p.key.partition)
			p.paused = false
		}
	}
	c.mu.Unlock()
	if len(tps) > 0 {
		// A partition assigned again later must be fetched.
		cl.ResumeFetchPartitions(tps)
	}
	return err
}

func removeGone(ps []*partition) []*partition {
	keep := ps[:0]
	for _, p := range ps {
		if !p.gone {
			keep = append(keep, p)
		}
	}
	clear(ps[len(keep):])
	return keep
}

// commitOwned commits the handled offsets of the partitions this member
// still owns.
func (c *Consumer) commitOwned(ctx context.Context) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.mu.Lock()
	var ps []*partition
	for _, p := range c.parts {
		if !p.gone {
			ps = append(ps, p)
		}
	}
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, shutdownTimeout)
	defer cancel()
	return c.commit(ctx, c.cl, ps)
}

// commit commits the handled offsets of ps that moved since their last
// commit. commitMu is held.
func (c *Consumer) commit(ctx context.Context, cl *kgo.Client, ps []*partition) error {
	offsets := map[string]map[int32]kgo.EpochOffset{}
	byKey := map[topicPartition]*partition{}
	c.mu.Lock()
	for _, p := range ps {
		if p.done.Offset < 0 || p.done.Offset <= p.committed {
			continue
		}
		if offsets[p.key.topic] == nil {
			offsets[p.key.topic] = map[int32]kgo.EpochOffset{}
		}
		offsets[p.key.topic][p.key.partition] = p.done
		byKey[p.key] = p
	}
	c.mu.Unlock()
	if len(byKey) == 0 {
		return nil
	}
	var errs []error
	cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, t := range resp.Topics {
			for _, rp := range t.Partitions {
				key := topicPartition{t.Topic, rp.Partition}
				if perr := kerr.ErrorForCode(rp.ErrorCode); perr != nil {
					errs = append(errs, fmt.Errorf("%s/%d: %w", t.Topic, rp.Partition, perr))
					continue
				}
				if p := byKey[key]; p != nil {
					p.committed = max(p.committed, offsets[t.Topic][rp.Partition].Offset)
				}
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("inbox: committing offsets: %w", err)
	}
	return nil
}

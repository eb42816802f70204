package inbox

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// partitionState is where an assigned partition's work stands.
type partitionState int

const (
	idle    partitionState = iota // no records to handle
	ready                         // records waiting, queued for a worker
	running                       // a worker is handling its records
	waiting                       // its first record failed; a timer retries it
)

// partition is an assigned partition. Its fields are guarded by
// Consumer.mu, except that only the worker running it reads backlog[0]
// outside the lock.
type partition struct {
	key    topicPartition
	ctx    context.Context // ends when the partition is revoked, lost or Run stops
	cancel context.CancelFunc

	backlog []*kgo.Record // fetched, not yet handled, in offset order
	state   partitionState
	attempt int         // failed attempts of backlog[0]
	retry   *time.Timer // set while waiting
	paused  bool        // fetching paused (PauseFetchPartitions)
	gone    bool        // revoked, lost or stopping: take nothing more

	done      kgo.EpochOffset // offset after the last handled record; Offset -1 before the first
	committed int64           // offset last committed to Kafka by this member; -1 before the first
	lso       int64           // last stable offset of the latest fetch; -1 before the first
	lag       int64           // lso minus the next offset to handle, as last reported
}

func newPartition(base context.Context, key topicPartition) *partition {
	p := &partition{key: key, done: kgo.EpochOffset{Epoch: -1, Offset: -1}, committed: -1, lso: -1}
	p.ctx, p.cancel = context.WithCancel(base)
	return p
}

// backlogLimits are the backlog lengths at which a partition is paused
// (more than high) and resumed (at most low): a partition is fetched only
// while one more poll (at most maxPoll records) fits under max.
func backlogLimits(max, maxPoll int) (high, low int) {
	high = max - maxPoll
	return high, high / 2
}

// wantPaused reports whether p should not be fetched: its first record is
// failing (the retry holds the partition's order anyway), or its backlog
// is above high, or above low while already paused.
func (p *partition) wantPaused(high, low int) bool {
	if p.attempt > 0 {
		return true
	}
	if p.paused {
		return len(p.backlog) > low
	}
	return len(p.backlog) > high
}

// nextOffset is the offset of the next record to handle, or -1 if unknown.
func (p *partition) nextOffset() int64 {
	if len(p.backlog) > 0 {
		return p.backlog[0].Offset
	}
	return p.done.Offset
}

// enqueue appends the fetched records to their partitions' backlogs and
// hands partitions that have new work to the workers. Records of
// partitions no longer assigned are dropped: their new owner fetches them.
func (c *Consumer) enqueue(fetches kgo.Fetches) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		p := c.parts[topicPartition{fp.Topic, fp.Partition}]
		if p == nil || p.gone {
			return
		}
		if fp.Err == nil && fp.LastStableOffset >= 0 {
			p.lso = fp.LastStableOffset
		}
		p.backlog = append(p.backlog, fp.Records...)
		if len(fp.Records) > 0 && p.state == idle {
			c.makeReady(p)
		}
		c.updatePaused(p)
		c.updateLag(p)
	})
}

// makeReady queues p for a worker. c.mu is held.
func (c *Consumer) makeReady(p *partition) {
	p.state = ready
	c.ready = append(c.ready, p)
	c.work.Signal()
}

// updatePaused pauses or resumes fetching p as wantPaused says. c.mu is
// held, so pausing and resuming one partition never interleave.
func (c *Consumer) updatePaused(p *partition) {
	high, low := backlogLimits(c.cfg.PartitionBacklog, c.cfg.MaxPollRecords)
	want := !p.gone && p.wantPaused(high, low)
	if want == p.paused {
		return
	}
	tp := map[string][]int32{p.key.topic: {p.key.partition}}
	if want {
		c.cl.PauseFetchPartitions(tp)
	} else {
		c.cl.ResumeFetchPartitions(tp)
	}
	p.paused = want
}

// updateLag sets p's lag from the last fetch's last stable offset and the
// next offset to handle. c.mu is held.
func (c *Consumer) updateLag(p *partition) {
	next := p.nextOffset()
	if p.gone || p.lso < 0 || next < 0 {
		return
	}
	p.lag = max(p.lso-next, 0)
	c.m.setLag(p.key.topic, p.key.partition, p.lag)
}

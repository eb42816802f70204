package inbox

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// outcome is what one attempt at a partition's first record leads to.
type outcome int

const (
	finished   outcome = iota // applied, duplicate, dead-lettered or a marker: next record
	retryLater                // failed; retry after the backoff
	halt                      // the partition stops: revoked, lost, Run stopping or a fatal error
)

// worker runs partitions that have records until Run stops.
func (c *Consumer) worker() {
	for {
		c.mu.Lock()
		for len(c.ready) == 0 && !c.stopping {
			c.work.Wait()
		}
		if c.stopping {
			c.mu.Unlock()
			return
		}
		p := c.ready[0]
		c.ready[0] = nil
		c.ready = c.ready[1:]
		p.state = running
		c.mu.Unlock()
		c.runPartition(p)
	}
}

// turn is how many records a worker handles of one partition before it
// lets a waiting partition have a go.
const turn = 100

// runPartition handles p's records in order until its backlog is empty,
// its first record must wait for a retry, it has had its turn while other
// partitions wait, or it stops.
func (c *Consumer) runPartition(p *partition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for handled := 0; ; handled++ {
		if p.gone || len(p.backlog) == 0 || c.fatal != nil {
			p.state = idle
			c.idle.Broadcast()
			return
		}
		if handled >= turn && len(c.ready) > 0 {
			c.makeReady(p) // to the back of the queue
			c.idle.Broadcast()
			return
		}
		r, attempt := p.backlog[0], p.attempt+1
		c.mu.Unlock()
		out, wait := c.attempt(p.ctx, r, attempt)
		c.mu.Lock()
		switch out {
		case finished:
			p.backlog[0] = nil
			p.backlog = p.backlog[1:]
			p.attempt = 0
			p.done = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
			c.updatePaused(p)
			c.updateLag(p)
		case retryLater:
			p.attempt = attempt
			c.updatePaused(p)
			if p.gone {
				p.state = idle
			} else {
				p.state = waiting
				p.retry = time.AfterFunc(wait, func() { c.retryDue(p) })
			}
			c.idle.Broadcast()
			return
		case halt:
			p.state = idle
			c.idle.Broadcast()
			return
		}
	}
}

// retryDue hands p back to the workers when its backoff has passed.
func (c *Consumer) retryDue(p *partition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.state != waiting || p.gone {
		return
	}
	p.retry = nil
	c.makeReady(p)
}

// attempt makes one attempt at r (its attempt-th). On a failure it returns
// retryLater with the backoff, or, after the last attempt, dead-letters r
// or stops the consumer as OnFailure says.
func (c *Consumer) attempt(ctx context.Context, r *kgo.Record, attempt int) (outcome, time.Duration) {
	if r.Attrs.IsControl() {
		return finished, 0 // a transaction marker: nothing to apply
	}
	ev, hasID := newEvent(r)
	if !hasID {
		if c.cfg.MissingID == MissingIDReject {
			return c.fail(ctx, r, ev, 0, ErrMissingID), 0
		}
		ev.ID = fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)
	}
	dup, err := c.apply(ctx, ev)
	if err == nil {
		if dup {
			c.m.incDuplicate()
			c.logEvent(c.log.Debug(), ev).Msg("duplicate event skipped")
			if c.cfg.Hooks.OnDuplicate != nil {
				c.cfg.Hooks.OnDuplicate(ev)
			}
			return finished, 0
		}
		c.m.incProcessed()
		if c.cfg.Hooks.AfterCommit != nil {
			c.cfg.Hooks.AfterCommit(ev)
		}
		return finished, 0
	}
	if ctx.Err() != nil {
		return halt, 0
	}
	if attempt >= c.cfg.MaxAttempts {
		return c.fail(ctx, r, ev, attempt, err), 0
	}
	c.m.incRetry()
	wait := backoff(c.cfg.InitialBackoff, c.cfg.MaxBackoff, attempt)
	c.logEvent(c.log.Warn(), ev).Err(err).Int("attempt", attempt).Dur("retry_in", wait).Msg("event failed; retrying")
	return retryLater, wait
}

func (c *Consumer) logEvent(e *zerolog.Event, ev Event) *zerolog.Event {
	return e.Str("event_id", ev.ID).Str("event_type", ev.Type).Str("topic", ev.Topic).
		Int32("partition", ev.Partition).Int64("offset", ev.Offset)
}

// apply runs the four steps in one transaction: BEGIN, insert the inbox
// row, the handler, COMMIT. dup reports an existing inbox row (nothing was
// changed). The statements run under ctx, so cancelling it interrupts
// them and the transaction rolls back; the transaction itself is not
// bound to ctx, so a COMMIT under way is never cut off (a cut-off COMMIT
// may have committed on the server yet report an error).
func (c *Consumer) apply(ctx context.Context, ev Event) (dup bool, err error) {
	tx, err := c.cfg.DB.BeginTx(context.WithoutCancel(ctx), c.cfg.TxOptions)
	if err != nil {
		return false, fmt.Errorf("beginning transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	dup, err = insertInbox(ctx, tx, c.cfg.Dialect, c.st, c.cfg.ConsumerName, ev.ID)
	if err != nil || dup {
		return dup, err
	}
	if err := c.cfg.Handler(ctx, tx, ev); err != nil {
		return false, fmt.Errorf("handler: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("committing: %w", err)
	}
	return false, nil
}

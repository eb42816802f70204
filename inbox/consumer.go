package inbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// shutdownTimeout bounds the final offset commit after Run's context ends.
const shutdownTimeout = 10 * time.Second

// Consumer reads a consumer group and applies each event once per
// ConsumerName; see the package documentation for the contract.
type Consumer struct {
	cfg     Config
	cl      *kgo.Client
	st      statements
	m       *metrics
	log     zerolog.Logger
	dlTopic string

	base       context.Context // parent of the partitions' contexts
	baseCancel context.CancelFunc

	mu      sync.Mutex
	parts   map[topicPartition]*partitionWork
	pending map[topicPartition]kgo.EpochOffset // handled, offset not yet committed
	fatal   error
}

type topicPartition struct {
	topic     string
	partition int32
}

// partitionWork is an assigned partition: its context ends when the
// partition is revoked or lost, and wg counts the goroutines handling it.
type partitionWork struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New validates cfg and creates the Kafka client. Nothing is read until
// Run.
func New(cfg Config) (*Consumer, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	qt, err := quoteTable(cfg.Dialect, cfg.Table)
	if err != nil {
		return nil, err
	}
	c := &Consumer{
		cfg:     cfg,
		st:      newStatements(cfg.Dialect, cfg.Table, qt),
		m:       newMetrics(cfg.ConsumerName, cfg.Registerer),
		log:     zerolog.Nop(),
		dlTopic: strings.ReplaceAll(cfg.DeadLetterTopic, "{consumer}", cfg.ConsumerName),
		parts:   map[topicPartition]*partitionWork{},
		pending: map[topicPartition]kgo.EpochOffset{},
	}
	if cfg.Logger != nil {
		c.log = cfg.Logger.With().Str("consumer", cfg.ConsumerName).Logger()
	}
	c.base, c.baseCancel = context.WithCancel(context.Background())
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(c.assigned),
		kgo.OnPartitionsRevoked(c.revoked),
		kgo.OnPartitionsLost(c.lost),
	}, cfg.KafkaOptions...)
	c.cl, err = kgo.NewClient(opts...)
	if err != nil {
		c.baseCancel()
		return nil, fmt.Errorf("inbox: creating kafka client: %w", err)
	}
	return c, nil
}

// Stats returns the counters since New.
func (c *Consumer) Stats() Stats { return c.m.stats() }

// Run consumes until ctx ends or an event fails under the Stop policy,
// then commits the offsets of every handled event, leaves the group and
// closes the client. It returns nil after ctx ended, the *HandlerError of
// a failed event, or a commit error. A Consumer runs once.
func (c *Consumer) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, c.baseCancel)
	defer stop()
	err := c.loop(ctx)
	c.baseCancel()
	cctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if cerr := c.commit(cctx, nil); cerr != nil {
		err = errors.Join(err, cerr)
	}
	c.cl.Close() // leaves the group; the revoke callback finds nothing left to commit
	return err
}

func (c *Consumer) loop(ctx context.Context) error {
	lastCommit := time.Now()
	for {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if c.hasPending() {
			pollCtx, cancel = context.WithDeadline(ctx, lastCommit.Add(c.cfg.CommitInterval))
		}
		fetches := c.cl.PollRecords(pollCtx, c.cfg.MaxPollRecords)
		cancel()
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return nil
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				c.log.Warn().Err(err).Str("topic", topic).Int32("partition", partition).Msg("fetch error")
			}
		})
		c.handleFetches(fetches)
		if err := c.fatalErr(); err != nil {
			return err
		}
		if time.Since(lastCommit) >= c.cfg.CommitInterval {
			if err := c.commit(ctx, nil); err != nil && ctx.Err() == nil {
				c.log.Warn().Err(err).Msg("offset commit failed; retrying at the next interval")
			}
			lastCommit = time.Now()
		}
	}
}

// handleFetches handles each partition's records in order, at most
// Workers partitions at once, and returns when all are done or stopped.
func (c *Consumer) handleFetches(fetches kgo.Fetches) {
	sem := make(chan struct{}, c.cfg.Workers)
	var wg sync.WaitGroup
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		key := topicPartition{p.Topic, p.Partition}
		c.mu.Lock()
		w := c.parts[key]
		if w != nil {
			w.wg.Add(1)
		}
		c.mu.Unlock()
		if w == nil {
			return // revoked since the fetch
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.wg.Done()
			select {
			case sem <- struct{}{}:
			case <-w.ctx.Done():
				return
			}
			defer func() { <-sem }()
			c.handlePartition(w.ctx, key, p)
		}()
	})
	wg.Wait()
}

func (c *Consumer) handlePartition(ctx context.Context, key topicPartition, p kgo.FetchTopicPartition) {
	for _, r := range p.Records {
		if ctx.Err() != nil || !c.handleRecord(ctx, r) {
			return
		}
		c.mu.Lock()
		c.pending[key] = kgo.EpochOffset{Epoch: r.LeaderEpoch, Offset: r.Offset + 1}
		c.mu.Unlock()
		c.m.setLag(p.Topic, p.Partition, p.HighWatermark-r.Offset-1)
	}
}

// handleRecord applies r, retrying, and dead-letters it when every attempt
// failed. It returns false when the partition must stop: ctx ended or the
// consumer stops.
func (c *Consumer) handleRecord(ctx context.Context, r *kgo.Record) bool {
	ev, hasID := newEvent(r)
	if !hasID {
		if c.cfg.MissingID == MissingIDReject {
			return c.fail(ctx, r, ev, 0, ErrMissingID)
		}
		ev.ID = fmt.Sprintf("%s/%d/%d", r.Topic, r.Partition, r.Offset)
	}
	for attempt := 1; ; attempt++ {
		dup, err := c.apply(ctx, ev)
		if err == nil {
			if dup {
				c.m.incDuplicate()
				c.logEvent(c.log.Debug(), ev).Msg("duplicate event skipped")
				if c.cfg.Hooks.OnDuplicate != nil {
					c.cfg.Hooks.OnDuplicate(ev)
				}
				return true
			}
			c.m.incProcessed()
			if c.cfg.Hooks.AfterCommit != nil {
				c.cfg.Hooks.AfterCommit(ev)
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if attempt >= c.cfg.MaxAttempts {
			return c.fail(ctx, r, ev, attempt, err)
		}
		c.m.incRetry()
		wait := backoff(c.cfg.InitialBackoff, c.cfg.MaxBackoff, attempt)
		c.logEvent(c.log.Warn(), ev).Err(err).Int("attempt", attempt).Dur("retry_in", wait).Msg("event failed; retrying")
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

func (c *Consumer) logEvent(e *zerolog.Event, ev Event) *zerolog.Event {
	return e.Str("event_id", ev.ID).Str("event_type", ev.Type).Str("topic", ev.Topic).
		Int32("partition", ev.Partition).Int64("offset", ev.Offset)
}

// apply runs the four steps in one transaction: BEGIN, insert the inbox
// row, the handler, COMMIT. dup reports an existing inbox row (nothing was
// changed).
func (c *Consumer) apply(ctx context.Context, ev Event) (dup bool, err error) {
	tx, err := c.cfg.DB.BeginTx(ctx, c.cfg.TxOptions)
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

func (c *Consumer) setFatal(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fatal == nil {
		c.fatal = err
	}
	c.baseCancel()
}

func (c *Consumer) fatalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

func (c *Consumer) hasPending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0
}

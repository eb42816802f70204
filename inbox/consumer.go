package inbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// shutdownTimeout bounds each offset commit, and the final one after Run's
// context ends.
const shutdownTimeout = 10 * time.Second

// fetchMaxWait is how long a fetch waits for data; KafkaOptions may
// override it.
const fetchMaxWait = 500 * time.Millisecond

// ErrRunTwice is returned by a second call of Run on one Consumer.
var ErrRunTwice = errors.New("inbox: Run called twice on one Consumer; create a new Consumer")

// Consumer reads a consumer group and applies each event once per
// ConsumerName; see the package documentation for the contract. New only
// validates; Run joins the group, and leaves it before returning.
type Consumer struct {
	cfg     Config
	st      statements
	m       *metrics
	log     zerolog.Logger
	dlTopic string
	ran     atomic.Bool

	// Set by Run before the client exists.
	cl         *kgo.Client
	base       context.Context // parent of the partitions' contexts
	baseCancel context.CancelFunc
	stopRun    context.CancelFunc // ends the poll loop (fatal errors)

	// commitMu orders offset commits with revocation: a partition is handed
	// over only after every commit that could name it has returned.
	commitMu sync.Mutex

	mu       sync.Mutex
	work     *sync.Cond // signalled when ready grows or stopping is set
	idle     *sync.Cond // broadcast when a partition stops running
	parts    map[topicPartition]*partition
	ready    []*partition // partitions with records and no worker, FIFO
	stopping bool         // workers exit
	fatal    error
}

type topicPartition struct {
	topic     string
	partition int32
}

// New validates cfg and returns a Consumer. It connects to nothing: Run
// creates the Kafka client and joins the group, so a Consumer that is never
// run holds no partitions.
func New(cfg Config) (*Consumer, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	qt, err := quoteTable(cfg.Dialect, cfg.Table)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.ConsumerName, cfg.Registerer)
	if err != nil {
		return nil, err
	}
	c := &Consumer{
		cfg:     cfg,
		st:      newStatements(cfg.Dialect, cfg.Table, qt),
		m:       m,
		log:     zerolog.Nop(),
		dlTopic: strings.ReplaceAll(cfg.DeadLetterTopic, "{consumer}", cfg.ConsumerName),
		parts:   map[topicPartition]*partition{},
	}
	c.work = sync.NewCond(&c.mu)
	c.idle = sync.NewCond(&c.mu)
	if cfg.Logger != nil {
		c.log = cfg.Logger.With().Str("consumer", cfg.ConsumerName).Logger()
	}
	return c, nil
}

// Stats returns the counters since New and the current lag.
func (c *Consumer) Stats() Stats {
	s := c.m.stats()
	c.mu.Lock()
	for _, p := range c.parts {
		if p.lag > 0 {
			s.Lag += p.lag
		}
	}
	c.mu.Unlock()
	return s
}

// Run joins the group and consumes until ctx ends or an event fails under
// the Stop policy. Then it stops fetching, ends the work in progress (a
// transaction not yet committed rolls back), commits the offsets of every
// handled event, leaves the group and closes the client. It returns nil
// after ctx ended, the *HandlerError of a failed event, or a setup or
// commit error. A Consumer runs once.
func (c *Consumer) Run(ctx context.Context) error {
	if !c.ran.CompareAndSwap(false, true) {
		return ErrRunTwice
	}
	runCtx, stopRun := context.WithCancel(ctx)
	defer stopRun()
	c.stopRun = stopRun
	c.base, c.baseCancel = context.WithCancel(runCtx)
	defer c.baseCancel()
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(c.cfg.Brokers...),
		kgo.ConsumerGroup(c.cfg.Group),
		kgo.ConsumeTopics(c.cfg.Topics...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Transaction markers come through so that the handled position,
		// the committed offset and the lag move past them.
		kgo.KeepControlRecords(),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		// A resumed partition joins the fetches after the one in flight
		// returns: wait for data at most as long as Kafka's own consumer
		// does (franz-go's default is 5 s).
		kgo.FetchMaxWait(fetchMaxWait),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(c.assigned),
		kgo.OnPartitionsRevoked(c.revoked),
		kgo.OnPartitionsLost(c.lost),
	}, c.cfg.KafkaOptions...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("inbox: creating kafka client: %w", err)
	}
	c.cl = cl
	if c.cfg.OnFailure == DeadLetter {
		if err := c.ensureDeadLetterTopic(runCtx); err != nil {
			_ = c.shutdown() // nothing was handled
			c.cl.Close()
			return err
		}
	}
	var workers sync.WaitGroup
	for range c.cfg.Workers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			c.worker()
		}()
	}
	c.poll(runCtx)
	err = c.shutdown()
	c.mu.Lock()
	c.stopping = true
	c.work.Broadcast()
	c.mu.Unlock()
	workers.Wait()
	c.cl.Close() // leaves the group; the revoke callback finds nothing left
	if ferr := c.fatalErr(); ferr != nil {
		if err != nil {
			return errors.Join(ferr, err)
		}
		return ferr
	}
	return err
}

// shutdown ends the work on every partition and commits what was handled.
func (c *Consumer) shutdown() error {
	c.mu.Lock()
	var all []*partition
	for _, p := range c.parts {
		all = append(all, p)
	}
	c.mu.Unlock()
	return c.giveUp(c.cl, all, true, true)
}

// poll feeds the partitions' backlogs until ctx ends, and commits the
// handled offsets every CommitInterval.
func (c *Consumer) poll(ctx context.Context) {
	lastCommit := time.Now()
	for {
		pollCtx, cancel := context.WithDeadline(ctx, lastCommit.Add(c.cfg.CommitInterval))
		fetches := c.cl.PollRecords(pollCtx, c.cfg.MaxPollRecords)
		cancel()
		if ctx.Err() != nil || fetches.IsClientClosed() {
			return
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				c.log.Warn().Err(err).Str("topic", topic).Int32("partition", partition).Msg("fetch error")
			}
		})
		c.enqueue(fetches)
		if time.Since(lastCommit) >= c.cfg.CommitInterval {
			if err := c.commitOwned(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn().Err(err).Msg("offset commit failed; retrying at the next interval")
			}
			lastCommit = time.Now()
		}
	}
}

func (c *Consumer) setFatal(err error) {
	c.mu.Lock()
	if c.fatal == nil {
		c.fatal = err
	}
	c.mu.Unlock()
	c.stopRun()
}

func (c *Consumer) fatalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fatal
}

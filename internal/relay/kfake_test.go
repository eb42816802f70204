package relay

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/pipeline/pipelinetest"
	"github.com/binlog-router/binlog-router/internal/route"
)

// These tests run the relay's real producer (kafka.Producer) against kfake
// over TCP, with the fakeSource, and read what a consumer reads.

const outboxTopic = "outbox.event.OrderCreated"

type kfakeRelay struct {
	t      *testing.T
	k      *devenv.Kafka
	src    *pipelinetest.Source
	r      *Relay
	cancel context.CancelFunc
	exited chan struct{}
	err    error
}

func newKfakeRelay(t *testing.T, mod func(*Config)) *kfakeRelay {
	t.Helper()
	k, err := devenv.StartKfake()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	cfg := Config{Name: "unit", Kafka: []kgo.Opt{kgo.SeedBrokers(k.Brokers...)}, Config: pipeline.Config{Route: route.DefaultConfig(),
		Logger: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)}}
	if mod != nil {
		mod(&cfg)
	}
	src := pipelinetest.NewSource()
	r, err := newRelay(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	return &kfakeRelay{t: t, k: k, src: src, r: r}
}

func (h *kfakeRelay) run() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.exited = cancel, make(chan struct{})
	go func() {
		defer close(h.exited)
		h.err = h.r.Run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		<-h.exited
	})
}

func (h *kfakeRelay) wait() error {
	h.t.Helper()
	select {
	case <-h.exited:
		return h.err
	case <-time.After(time.Minute):
		h.t.Fatal("the relay still runs after a minute")
		return nil
	}
}

// awaitCheckpoint waits until the stored checkpoint is set.
func (h *kfakeRelay) awaitCheckpoint(set string) {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cp, err := kafka.LoadCheckpoint(ctx, h.r.cfg.CheckpointTopic, h.r.cfg.Name, h.r.cfg.Kafka...)
		cancel()
		if err == nil && cp.GTIDSet == set {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("checkpoint %s not stored after a minute (last: %+v, %v)", set, cp, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// read returns the event ids a consumer of the outbox topic reads, with
// the isolation level given, once it has read the id last.
func (h *kfakeRelay) read(isolation kgo.IsolationLevel, last string) []string {
	h.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(h.k.Brokers...), kgo.ConsumeTopics(outboxTopic),
		kgo.FetchIsolationLevel(isolation), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		h.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []string
	for !slices.Contains(got, last) {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			h.t.Fatalf("reading %s (read %v): %v", outboxTopic, got, err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, headerID(r)) })
	}
	return got
}

func headerID(r *kgo.Record) string {
	for _, h := range r.Headers {
		if h.Key == route.HeaderID {
			return string(h.Value)
		}
	}
	return ""
}

// marker commits one record after everything else, with the rows' key
// (so to their partition), from a producer of transactional id txnID.
func marker(t *testing.T, k *devenv.Kafka, txnID, id string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Brokers...), kgo.TransactionalID(txnID),
		kgo.RecordPartitioner(route.Partitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	rec := &kgo.Record{Topic: outboxTopic, Key: []byte("order-1"), Headers: []kgo.RecordHeader{{Key: route.HeaderID, Value: []byte(id)}}}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
}

// A second producer with the router's transactional id, started while
// the router's Kafka transaction is open, aborts that transaction; the
// router's commit then fails with ErrFenced, and consumers never see the
// aborted rows.
func TestRelayOnKfakeFencedByAnotherInstance(t *testing.T) {
	h := newKfakeRelay(t, nil)
	h.src.Txn(1, 1, 2)
	h.run()
	h.awaitCheckpoint("0-1-1")
	h.src.Rows(2, 3)
	if got := h.read(kgo.ReadUncommitted(), pipelinetest.EventID(3)); !slices.Equal(got, pipelinetest.IDs(1, 2, 3)) {
		t.Fatalf("read uncommitted %v, want %v", got, pipelinetest.IDs(1, 2, 3))
	}
	// Another instance with the same name: initialising its producer id
	// fences the router and aborts its open transaction.
	txnIDs := kafka.TransactionalIDs(h.r.cfg.Name, h.r.cfg.KafkaTransactions)
	for _, id := range txnIDs[1:] {
		if err := kafka.Fence(context.Background(), id, kgo.SeedBrokers(h.k.Brokers...)); err != nil {
			t.Fatal(err)
		}
	}
	marker(t, h.k, txnIDs[0], "other-instance")
	h.src.End(2)
	err := h.wait()
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("Run = %v, want ErrFenced", err)
	}
	if got := h.read(kgo.ReadCommitted(), "other-instance"); !slices.Equal(got, append(pipelinetest.IDs(1, 2), "other-instance")) {
		t.Errorf("read committed %v, want %v and the other instance's record", got, pipelinetest.IDs(1, 2))
	}
	h.awaitCheckpoint("0-1-1")
}

// pausingKafka pauses the first session's first Commit until the broker
// has aborted the open transaction after its timeout, as a process that
// stopped running would.
type pausingKafka struct {
	cluster
	pause func()
}

func (p *pausingKafka) newSink() (pipeline.Sink, error) {
	s, err := p.cluster.newSink()
	if err != nil || p.pause == nil {
		return s, err
	}
	pause := p.pause
	p.pause = nil
	return &pausingSink{Sink: s, pause: pause}, nil
}

type pausingSink struct {
	pipeline.Sink
	pause func()
}

func (s *pausingSink) Commit(ctx context.Context, cp *checkpoint.Checkpoint) error {
	if s.pause != nil {
		s.pause()
		s.pause = nil
	}
	return s.Sink.Commit(ctx, cp)
}

// A Kafka transaction that outlives the transaction timeout is aborted by
// the broker; the relay takes the stale epoch for a timeout, not a
// takeover, and a new session in the same process commits the rows once.
func TestRelayOnKfakeTransactionTimeout(t *testing.T) {
	h := newKfakeRelay(t, func(c *Config) { c.TransactionTimeout = 3 * time.Second })
	txnID := kafka.TransactionalID(h.r.cfg.Name)
	h.r.cluster = &pausingKafka{cluster: h.r.cluster, pause: func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(h.k.Brokers...))
		if err != nil {
			t.Error(err)
			return
		}
		defer cl.Close()
		// The transaction is open at the broker once its first partition
		// was added; it is over when the broker has aborted it.
		deadline, ongoing := time.Now().Add(time.Minute), false
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			d, err := kadm.NewClient(cl).DescribeTransactions(ctx, txnID)
			cancel()
			state := d[txnID].State
			switch {
			case err != nil:
			case state == "Ongoing":
				ongoing = true
			case ongoing:
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Error("the broker did not abort the transaction within a minute")
	}}
	h.src.Txn(1, 1, 2)
	h.run()
	h.awaitCheckpoint("0-1-1")
	h.src.Txn(2, 3)
	h.awaitCheckpoint("0-1-2")
	marker(t, h.k, "unit-marker", "end")
	if got := h.read(kgo.ReadCommitted(), "end"); !slices.Equal(got, append(pipelinetest.IDs(1, 2, 3), "end")) {
		t.Errorf("read committed %v, want %v once each", got, pipelinetest.IDs(1, 2, 3))
	}
	if runs := h.src.Starts(); len(runs) < 2 || runs[1].From != "" {
		t.Errorf("sessions started at %+v, want a second one from the start (nothing was committed)", runs)
	}
}

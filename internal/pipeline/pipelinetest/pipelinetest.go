// Package pipelinetest holds, for tests only, a binlog source and a Kafka
// cluster in memory that the loop's tests (package pipeline) and the
// relay's share: Source implements pipeline.Source, Kafka's sessions
// (Sink) pipeline.Sink, with the faults a test sets.
package pipelinetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Source is a MariaDB binlog in memory: transactions of one-domain
// GTIDs 0-1-N whose outbox rows and ends the test appends. Every RunResume
// reads it from the start, skips what its position covers, and then waits
// for more, as a replica waits at the end of the binlog.
type Source struct {
	server *binlog.Server

	// Fail, set by a test before the run, is returned at once by the
	// next RunResume.
	Fail error

	mu     sync.Mutex
	events []Event
	grew   chan struct{} // closed and replaced when events grow
	runs   []Run         // the positions RunResume was called with
}

// Event is an outbox row of transaction GTID, or its end (ID 0).
type Event struct {
	GTID string
	ID   int
}

// Run is the position a RunResume was called with.
type Run struct {
	From   string
	Resume binlog.Resume
}

// NewSource returns an empty binlog.
func NewSource() *Source {
	return &Source{
		server: &binlog.Server{Version: "fake-mariadb", Flavor: gtid.MariaDB, ServerID: 1,
			Executed: gtid.New(gtid.MariaDB), Purged: gtid.New(gtid.MariaDB)},
		grew: make(chan struct{}),
	}
}

// Txn appends transaction 0-1-seq with outbox rows of the event ids ids
// (none: a transaction without outbox rows), ended.
func (s *Source) Txn(seq int, ids ...int) {
	s.Rows(seq, ids...)
	s.End(seq)
}

// Rows appends outbox rows of transaction 0-1-seq, which stays open.
func (s *Source) Rows(seq int, ids ...int) {
	for _, id := range ids {
		s.append(Event{GTID: MariaGTID(seq), ID: id})
	}
}

// End ends transaction 0-1-seq.
func (s *Source) End(seq int) { s.append(Event{GTID: MariaGTID(seq)}) }

func (s *Source) append(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	close(s.grew)
	s.grew = make(chan struct{})
}

// Events returns what the test appended, in binlog order.
func (s *Source) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// Starts returns the positions RunResume was called with.
func (s *Source) Starts() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs)
}

func (s *Source) Server() *binlog.Server                { return s.server }
func (s *Source) SetLayouts(map[string]schema.TableDef) {}
func (s *Source) SetPrepared([]binlog.PreparedXA)       {}

// RunResume streams the binlog after from as binlog.Reader does.
func (s *Source) RunResume(ctx context.Context, from *gtid.Set, resume binlog.Resume, q *binlog.Queue) (err error) {
	defer func() { q.Close(err) }()
	s.mu.Lock()
	s.runs = append(s.runs, Run{From: from.String(), Resume: resume})
	fail := s.Fail
	s.Fail = nil
	s.mu.Unlock()
	if fail != nil {
		return fail
	}
	txns := map[string]*binlog.Txn{}
	skip := map[string]int{resume.GTID: resume.Rows}
	for next := 0; ; next++ {
		s.mu.Lock()
		for next >= len(s.events) {
			grew := s.grew
			s.mu.Unlock()
			select {
			case <-grew:
			case <-ctx.Done():
				return ctx.Err()
			}
			s.mu.Lock()
		}
		e := s.events[next]
		s.mu.Unlock()

		one := gtid.New(gtid.MariaDB)
		if err := one.Add(e.GTID); err != nil {
			return err
		}
		if from.Contains(one) {
			continue // before the start position
		}
		t := txns[e.GTID]
		if t == nil {
			if t, err = binlog.NewTxn(gtid.MariaDB, e.GTID, time.Now()); err != nil {
				return err
			}
			txns[e.GTID] = t
		}
		pos := binlog.Position{File: "fake-bin.000001", Pos: uint32(4 + next)}
		if e.ID == 0 {
			if err := q.EndTxn(ctx, t, pos); err != nil {
				return err
			}
			continue
		}
		if skip[e.GTID] > 0 {
			skip[e.GTID]--
			continue
		}
		if err := q.AddRow(ctx, OutboxRow(t, e.ID), 100, pos); err != nil {
			return err
		}
	}
}

// MariaGTID is the GTID of transaction seq.
func MariaGTID(seq int) string { return fmt.Sprintf("0-1-%d", seq) }

// EventID is the event id of row n.
func EventID(n int) string { return fmt.Sprintf("00000000-0000-0000-0000-%012d", n) }

// OutboxRow is the outbox row of event id id in t.
func OutboxRow(t *binlog.Txn, id int) binlog.OutboxRow {
	return binlog.OutboxRow{Database: "app", Table: "outbox", Txn: t,
		EventID: []byte(EventID(id)), AggregateID: []byte("order-1"), EventType: []byte("OrderCreated"),
		Payload: []byte(fmt.Sprintf(`{"n":%d}`, id))}
}

// Kafka is a broker in memory for one transactional id: it keeps the
// committed Kafka transactions, bumps the producer epoch when a producer
// initialises (fencing the older ones) and when a transaction outlives
// the transaction timeout (aborting it), as Kafka does.
type Kafka struct {
	cfg Config

	// Mu guards what follows; a test holds it to read or set a field
	// while sessions run.
	Mu        sync.Mutex
	epoch     int
	committed []Txn // exactly-once: committed transactions; at-least-once: one per checkpoint
	acked     []*kgo.Record
	Sinks     int // sessions (NewSink calls)
	Aborts    int // EndTransaction(abort) calls
	Drops     int // transactions forgotten without EndTransaction

	// Faults, set by tests.
	FailRecord   func(rec *kgo.Record) error // a record's produce error, or nil
	CommitErr    func() (applied bool, err error)
	FlushDelay   time.Duration // the next Flush takes this long
	ProduceDelay time.Duration // every Produce takes this long (a slow broker)
	StallFlush   bool          // Flush waits for its context
}

// Config is what a Kafka takes of the router's settings.
type Config struct {
	Transactional      bool // exactly-once; false: at-least-once, every record acknowledged at once
	CheckpointTopic    string
	MaxMessageBytes    int // every topic's record batch limit
	TransactionTimeout time.Duration
}

// Txn is one committed Kafka transaction: its records' event ids and
// the checkpoint it carries.
type Txn struct {
	IDs        []string
	Checkpoint *checkpoint.Checkpoint
	At         time.Time // when it was committed
}

// NewKafka returns an empty cluster.
func NewKafka(cfg Config) *Kafka { return &Kafka{cfg: cfg} }

// NewSink returns a new session (not yet open).
func (k *Kafka) NewSink() *Sink {
	k.Mu.Lock()
	defer k.Mu.Unlock()
	k.Sinks++
	return &Sink{k: k, transactional: k.cfg.Transactional, limits: kafka.FlagLimits(k.cfg.MaxMessageBytes)}
}

// Fence initialises the transactional id as another instance would.
func (k *Kafka) Fence() {
	k.Mu.Lock()
	defer k.Mu.Unlock()
	k.epoch++
}

// Txns returns the committed transactions.
func (k *Kafka) Txns() []Txn {
	k.Mu.Lock()
	defer k.Mu.Unlock()
	return slices.Clone(k.committed)
}

// IDs returns the event ids committed, in order.
func (k *Kafka) IDs() []string {
	var ids []string
	for _, t := range k.Txns() {
		ids = append(ids, t.IDs...)
	}
	return ids
}

// Sink is one session of a Kafka: a pipeline.Sink.
type Sink struct {
	k             *Kafka
	transactional bool
	epoch         int
	inTxn         bool
	added         time.Time // the first record: the broker's transaction timer starts
	open          []*kgo.Record
	err           error
	limits        *kafka.TopicLimits // without a client every topic's limit is MaxMessageBytes
}

// Open initialises the producer (bumping the epoch: fencing older ones)
// and loads the last committed checkpoint.
func (s *Sink) Open(context.Context) (*checkpoint.Checkpoint, error) {
	s.k.Mu.Lock()
	defer s.k.Mu.Unlock()
	if s.transactional {
		s.k.epoch++
		s.epoch = s.k.epoch
	}
	for i := len(s.k.committed) - 1; i >= 0; i-- {
		if cp := s.k.committed[i].Checkpoint; cp != nil {
			c := *cp
			return &c, nil
		}
	}
	return nil, nil
}

func (s *Sink) Produce(ctx context.Context, rec *kgo.Record) error {
	if err := s.limits.Check(ctx, rec); err != nil {
		return err
	}
	s.k.Mu.Lock()
	delay := s.k.ProduceDelay
	s.k.Mu.Unlock()
	time.Sleep(delay)
	s.k.Mu.Lock()
	defer s.k.Mu.Unlock()
	if s.transactional && !s.inTxn {
		s.inTxn, s.added = true, time.Time{}
	}
	if s.k.FailRecord != nil && s.err == nil {
		if err := s.k.FailRecord(rec); err != nil {
			s.err = kafka.Describe(rec, err)
			return nil
		}
	}
	if !s.transactional {
		s.k.acked = append(s.k.acked, rec)
		if cp := decodeCheckpoint(rec, s.k.cfg); cp != nil {
			s.k.committed = append(s.k.committed, Txn{IDs: idsOf(s.k.acked, s.k.cfg), Checkpoint: cp, At: time.Now()})
			s.k.acked = nil
		}
		return nil
	}
	if s.added.IsZero() {
		s.added = time.Now()
	}
	s.open = append(s.open, rec)
	return nil
}

// stale reports whether the broker no longer takes this producer's
// epoch, aborting a transaction older than the transaction timeout first.
// Caller holds k.Mu.
func (s *Sink) stale() bool {
	if s.transactional && s.epoch == s.k.epoch && !s.added.IsZero() && time.Since(s.added) > s.k.cfg.TransactionTimeout {
		s.k.epoch++ // the coordinator aborts the transaction and bumps the epoch
	}
	return s.transactional && s.epoch != s.k.epoch
}

// flush waits as the faults say, then returns the first record failure.
func (s *Sink) flush(ctx context.Context) error {
	s.k.Mu.Lock()
	delay, stall := s.k.FlushDelay, s.k.StallFlush
	s.k.FlushDelay = 0
	s.k.Mu.Unlock()
	if stall {
		<-ctx.Done()
		return fmt.Errorf("%w: %w", kafka.ErrNotAcknowledged, ctx.Err())
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	s.k.Mu.Lock()
	defer s.k.Mu.Unlock()
	if s.err == nil && len(s.open) > 0 && s.stale() {
		s.err = kafka.Describe(s.open[0], kerr.InvalidProducerEpoch)
	}
	if s.err != nil {
		return fmt.Errorf("producing records: %w", s.err)
	}
	return nil
}

func (s *Sink) Commit(ctx context.Context, cp *checkpoint.Checkpoint) error {
	rec, err := cp.Record(s.k.cfg.CheckpointTopic)
	if err != nil {
		return err
	}
	if !s.transactional {
		if err := s.flush(ctx); err != nil {
			return err
		}
		return s.Produce(ctx, rec)
	}
	if err := s.Produce(ctx, rec); err != nil {
		return err
	}
	if err := s.flush(ctx); err != nil {
		return err
	}
	s.k.Mu.Lock()
	defer s.k.Mu.Unlock()
	if s.stale() {
		return fmt.Errorf("%w: %w", kafka.ErrCommitUnknown, kerr.ProducerFenced)
	}
	applied, err := true, error(nil)
	if s.k.CommitErr != nil {
		applied, err = s.k.CommitErr()
	}
	if applied {
		var cp *checkpoint.Checkpoint
		if n := len(s.open); n > 0 {
			cp = decodeCheckpoint(s.open[n-1], s.k.cfg)
		}
		s.k.committed = append(s.k.committed, Txn{IDs: idsOf(s.open, s.k.cfg), Checkpoint: cp, At: time.Now()})
		s.open = nil
	}
	if err != nil {
		if applied {
			s.inTxn = false // the broker has no open transaction left
		}
		return fmt.Errorf("%w: %w", kafka.ErrCommitUnknown, err)
	}
	s.inTxn = false
	return nil
}

// Abort aborts the open transaction at the broker, or, for a stale
// epoch, only forgets it.
func (s *Sink) Abort(_ context.Context, cause error) {
	if !s.inTxn {
		return
	}
	s.k.Mu.Lock()
	defer s.k.Mu.Unlock()
	if kafka.StaleEpoch(cause) {
		s.k.Drops++
	} else {
		s.k.Aborts++
	}
	s.open, s.inTxn = nil, false
}

func (s *Sink) Close(ctx context.Context) error { return s.flush(ctx) }

// decodeCheckpoint returns the checkpoint rec carries, or nil for an
// outbox record.
func decodeCheckpoint(rec *kgo.Record, cfg Config) *checkpoint.Checkpoint {
	if rec.Topic != cfg.CheckpointTopic {
		return nil
	}
	cp, err := checkpoint.Decode(rec.Value)
	if err != nil {
		panic(err)
	}
	return cp
}

// idsOf returns the event ids of the outbox records among recs.
func idsOf(recs []*kgo.Record, cfg Config) []string {
	var ids []string
	for _, r := range recs {
		if r.Topic == cfg.CheckpointTopic {
			continue
		}
		for _, h := range r.Headers {
			if h.Key == route.HeaderID {
				ids = append(ids, string(h.Value))
			}
		}
	}
	return ids
}

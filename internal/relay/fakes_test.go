package relay

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
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// fakeSource is a MariaDB binlog in memory: transactions of one-domain
// GTIDs 0-1-N whose outbox rows and ends the test appends. Every RunResume
// reads it from the start, skips what its position covers, and then waits
// for more, as a replica waits at the end of the binlog.
type fakeSource struct {
	server *binlog.Server

	mu     sync.Mutex
	events []fakeEvent
	grew   chan struct{} // closed and replaced when events grow
	runs   []fakeRun     // the positions RunResume was called with
	fail   error         // the next RunResume returns it at once
}

// fakeEvent is an outbox row of transaction gtid, or its end (id 0).
type fakeEvent struct {
	gtid string
	id   int
}

type fakeRun struct {
	from   string
	resume binlog.Resume
}

func newFakeSource() *fakeSource {
	return &fakeSource{
		server: &binlog.Server{Version: "fake-mariadb", Flavor: gtid.MariaDB, ServerID: 1,
			Executed: gtid.New(gtid.MariaDB), Purged: gtid.New(gtid.MariaDB)},
		grew: make(chan struct{}),
	}
}

// txn appends transaction 0-1-seq with outbox rows of the event ids ids
// (none: a transaction without outbox rows), ended.
func (s *fakeSource) txn(seq int, ids ...int) {
	s.rows(seq, ids...)
	s.end(seq)
}

// rows appends outbox rows of transaction 0-1-seq, which stays open.
func (s *fakeSource) rows(seq int, ids ...int) {
	for _, id := range ids {
		s.append(fakeEvent{gtid: mariaGTID(seq), id: id})
	}
}

// end ends transaction 0-1-seq.
func (s *fakeSource) end(seq int) { s.append(fakeEvent{gtid: mariaGTID(seq)}) }

func (s *fakeSource) append(e fakeEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	close(s.grew)
	s.grew = make(chan struct{})
}

func (s *fakeSource) starts() []fakeRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs)
}

func (s *fakeSource) Server() *binlog.Server                { return s.server }
func (s *fakeSource) SetLayouts(map[string]schema.TableDef) {}
func (s *fakeSource) SetPrepared([]binlog.PreparedXA)       {}

func (s *fakeSource) RunResume(ctx context.Context, from *gtid.Set, resume binlog.Resume, q *binlog.Queue) (err error) {
	defer func() { q.Close(err) }()
	s.mu.Lock()
	s.runs = append(s.runs, fakeRun{from: from.String(), resume: resume})
	fail := s.fail
	s.fail = nil
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
		if err := one.Add(e.gtid); err != nil {
			return err
		}
		if from.Contains(one) {
			continue // before the start position
		}
		t := txns[e.gtid]
		if t == nil {
			if t, err = binlog.NewTxn(gtid.MariaDB, e.gtid, time.Now()); err != nil {
				return err
			}
			txns[e.gtid] = t
		}
		pos := binlog.Position{File: "fake-bin.000001", Pos: uint32(4 + next)}
		if e.id == 0 {
			if err := q.EndTxn(ctx, t, pos); err != nil {
				return err
			}
			continue
		}
		if skip[e.gtid] > 0 {
			skip[e.gtid]--
			continue
		}
		if err := q.AddRow(ctx, outboxRow(t, e.id), 100, pos); err != nil {
			return err
		}
	}
}

var _ pipeline.Source = (*fakeSource)(nil)

func mariaGTID(seq int) string { return fmt.Sprintf("0-1-%d", seq) }

func eventID(n int) string { return fmt.Sprintf("00000000-0000-0000-0000-%012d", n) }

func outboxRow(t *binlog.Txn, id int) binlog.OutboxRow {
	return binlog.OutboxRow{Database: "app", Table: "outbox", Txn: t,
		EventID: []byte(eventID(id)), AggregateID: []byte("order-1"), EventType: []byte("OrderCreated"),
		Payload: []byte(fmt.Sprintf(`{"n":%d}`, id))}
}

// fakeKafka is a broker in memory for one transactional id: it keeps the
// committed Kafka transactions, bumps the producer epoch when a producer
// initialises (fencing the older ones) and when a transaction outlives
// the transaction timeout (aborting it), as Kafka does.
type fakeKafka struct {
	cfg *Config

	mu        sync.Mutex
	epoch     int
	committed []fakeTxn // exactly-once: committed transactions; at-least-once: one per checkpoint
	acked     []*kgo.Record
	sinks     int
	aborts    int // EndTransaction(abort) calls
	drops     int // transactions forgotten without EndTransaction

	// Faults, set by tests.
	failRecord   func(rec *kgo.Record) error // a record's produce error, or nil
	commitErr    func() (applied bool, err error)
	flushDelay   time.Duration // the next Flush takes this long
	produceDelay time.Duration // every Produce takes this long (a slow broker)
	stallFlush   bool          // Flush waits for its context
}

// fakeTxn is one committed Kafka transaction: its records' event ids and
// the checkpoint it carries.
type fakeTxn struct {
	ids        []string
	checkpoint *checkpoint.Checkpoint
	at         time.Time
}

func newFakeKafka(cfg *Config) *fakeKafka { return &fakeKafka{cfg: cfg} }

func (k *fakeKafka) ensureCheckpointTopic(context.Context) error { return nil }

func (k *fakeKafka) newSink() (pipeline.Sink, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sinks++
	return &fakeSink{k: k, transactional: k.cfg.Delivery == ExactlyOnce, limits: kafka.FlagLimits(k.cfg.MaxMessageBytes)}, nil
}

// fence initialises the transactional id as another instance would.
func (k *fakeKafka) fence() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.epoch++
}

// txns returns the committed transactions.
func (k *fakeKafka) txns() []fakeTxn {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.committed)
}

// ids returns the event ids committed, in order.
func (k *fakeKafka) ids() []string {
	var ids []string
	for _, t := range k.txns() {
		ids = append(ids, t.ids...)
	}
	return ids
}

// fakeSink is one session of a fakeKafka.
type fakeSink struct {
	k             *fakeKafka
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
func (s *fakeSink) Open(context.Context) (*checkpoint.Checkpoint, error) {
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	if s.transactional {
		s.k.epoch++
		s.epoch = s.k.epoch
	}
	for i := len(s.k.committed) - 1; i >= 0; i-- {
		if cp := s.k.committed[i].checkpoint; cp != nil {
			c := *cp
			return &c, nil
		}
	}
	return nil, nil
}

func (s *fakeSink) Limit(ctx context.Context, topic string) (kafka.Limit, error) {
	return s.limits.Of(ctx, topic)
}

func (s *fakeSink) Produce(_ context.Context, rec *kgo.Record) error {
	s.k.mu.Lock()
	delay := s.k.produceDelay
	s.k.mu.Unlock()
	time.Sleep(delay)
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	if s.transactional && !s.inTxn {
		s.inTxn, s.added = true, time.Time{}
	}
	if s.k.failRecord != nil && s.err == nil {
		if err := s.k.failRecord(rec); err != nil {
			s.err = kafka.Describe(rec, err)
			return nil
		}
	}
	if !s.transactional {
		s.k.acked = append(s.k.acked, rec)
		if cp := decodeCheckpoint(rec, s.k.cfg); cp != nil {
			s.k.committed = append(s.k.committed, fakeTxn{ids: idsOf(s.k.acked, s.k.cfg), checkpoint: cp, at: time.Now()})
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
// Caller holds k.mu.
func (s *fakeSink) stale() bool {
	if s.transactional && s.epoch == s.k.epoch && !s.added.IsZero() && time.Since(s.added) > s.k.cfg.TransactionTimeout {
		s.k.epoch++ // the coordinator aborts the transaction and bumps the epoch
	}
	return s.transactional && s.epoch != s.k.epoch
}

// flush waits as the faults say, then returns the first record failure.
func (s *fakeSink) flush(ctx context.Context) error {
	s.k.mu.Lock()
	delay, stall := s.k.flushDelay, s.k.stallFlush
	s.k.flushDelay = 0
	s.k.mu.Unlock()
	if stall {
		<-ctx.Done()
		return fmt.Errorf("%w: %w", kafka.ErrNotAcknowledged, ctx.Err())
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	if s.err == nil && len(s.open) > 0 && s.stale() {
		s.err = kafka.Describe(s.open[0], kerr.InvalidProducerEpoch)
	}
	if s.err != nil {
		return fmt.Errorf("producing records: %w", s.err)
	}
	return nil
}

func (s *fakeSink) Commit(ctx context.Context, cp *checkpoint.Checkpoint) error {
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
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	if s.stale() {
		return fmt.Errorf("%w: %w", kafka.ErrCommitUnknown, kerr.ProducerFenced)
	}
	applied, err := true, error(nil)
	if s.k.commitErr != nil {
		applied, err = s.k.commitErr()
	}
	if applied {
		var cp *checkpoint.Checkpoint
		if n := len(s.open); n > 0 {
			cp = decodeCheckpoint(s.open[n-1], s.k.cfg)
		}
		s.k.committed = append(s.k.committed, fakeTxn{ids: idsOf(s.open, s.k.cfg), checkpoint: cp, at: time.Now()})
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
func (s *fakeSink) Abort(_ context.Context, cause error) {
	if !s.inTxn {
		return
	}
	s.k.mu.Lock()
	defer s.k.mu.Unlock()
	if kafka.StaleEpoch(cause) {
		s.k.drops++
	} else {
		s.k.aborts++
	}
	s.open, s.inTxn = nil, false
}

func (s *fakeSink) Close(ctx context.Context) error { return s.flush(ctx) }
func (s *fakeSink) Buffered() int64                 { return 0 }

var _ pipeline.Sink = (*fakeSink)(nil)

// decodeCheckpoint returns the checkpoint rec carries, or nil for an
// outbox record.
func decodeCheckpoint(rec *kgo.Record, cfg *Config) *checkpoint.Checkpoint {
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
func idsOf(recs []*kgo.Record, cfg *Config) []string {
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

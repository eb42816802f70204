package kafka

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// ErrNotAcknowledged means records were produced and not acknowledged
// before the caller's context ended: the brokers were unreachable, or
// slower than the caller's deadline.
var ErrNotAcknowledged = errors.New("records not acknowledged")

// ErrCommitUnknown marks a failed EndTransaction(commit): whether Kafka
// committed is known only to the next session (Open reads the outcome).
var ErrCommitUnknown = errors.New("commit outcome unknown")

// SessionConfig configures a Session.
type SessionConfig struct {
	// Producer configures the session's producers; its TransactionalID
	// is ignored (TransactionalIDs). Its BatchMaxBytes is the session's
	// topic limits.
	Producer Config
	// TransactionalIDs makes the session transactional (exactly-once):
	// one producer per id, whose transactions are used in turn (see
	// Commit). None makes it one idempotent producer (at-least-once).
	TransactionalIDs []string
	// Name is the router's --name: the key of its checkpoint.
	Name string
	// CheckpointTopic is the compacted topic of the checkpoints.
	CheckpointTopic string
	// SettleWait bounds Settle in Open.
	SettleWait time.Duration
	// Topics selects the topics where Open looks for the partitions of a
	// hanging transaction of its own to repair (repairHanging), such as
	// route.TopicPattern of the topic template and the dead-letter topic.
	// Nil, the router's, is every topic the client can list: markers are
	// only written where the session's own transaction is open, so the
	// filter bounds the work, not what is written.
	Topics *regexp.Regexp
	// OtherWriters are the transactional ids of the other producers that
	// write the router's checkpoint record: its recovery's
	// (RecoveryTransactionalID). When the checkpoint partition has not
	// settled after repairAfter, Open fences each (Fence), which ends a
	// transaction a killed recover left open there instead of waiting for
	// its timeout; a failure (no WRITE on the id) is logged.
	OtherWriters []string
	// OnRepaired, when set, is called once for each hanging transaction
	// whose markers Open wrote (committed: its decided outcome was a
	// commit), from the goroutine that called Open.
	OnRepaired func(committed bool)
	// Log receives the session's own messages.
	Log zerolog.Logger
	// NoCheckpoint makes a session that writes no checkpoint (a replay's
	// shadow): Open only initialises the producer and returns nil, and
	// Commit ignores its checkpoint and commits the records alone.
	NoCheckpoint bool
}

// Session is the Kafka side of one active router session: a producer,
// the topics' batch limits, and the checkpoint topic. Its methods are
// called from one goroutine. It is pipeline.Sink's implementation; see the
// contract there.
type Session struct {
	cfg    SessionConfig
	ps     []*Producer // one per transactional id, or the idempotent one
	cur    int         // index in ps of the open or next transaction's producer
	limits *TopicLimits
	closed bool
}

// NewSession creates the session's clients; they connect lazily (Open).
func NewSession(cfg SessionConfig) (*Session, error) {
	pc := cfg.Producer
	limits, err := OpenTopicLimits(pc.MaxMessageBytes, pc.AutoCreateTopics, cfg.Log, pc.Kafka...)
	if err != nil {
		return nil, err
	}
	pc.BatchMaxBytes = limits.BatchMax
	s := &Session{cfg: cfg, limits: limits}
	ids := cfg.TransactionalIDs
	if len(ids) == 0 {
		ids = []string{""}
	}
	for _, id := range ids {
		pc.TransactionalID = id
		p, err := New(pc)
		if err != nil {
			s.closeClients()
			return nil, err
		}
		s.ps = append(s.ps, p)
	}
	return s, nil
}

func (s *Session) transactional() bool { return len(s.cfg.TransactionalIDs) > 0 }

// p is the producer of the open or next transaction.
func (s *Session) p() *Producer { return s.ps[s.cur] }

// Open creates the checkpoint topic if it is missing, reads its batch
// limit, initialises the producers (fencing older producers of every id
// and ending their open transactions), waits until the checkpoint
// partition has settled (Settle) and returns the last committed
// checkpoint of Name, or nil when none is stored. With NoCheckpoint it
// only initialises the producers.
//
// Before the initialisation it describes its transactional ids, to know
// the decided outcome of each one's last transaction; if the checkpoint
// partition has not settled after repairAfter and holds only hanging
// transactions of its own whose outcome is so known (Apache Kafka's
// KAFKA-20734), it writes their markers (repairHanging) and waits again,
// within SettleWait in all.
func (s *Session) Open(ctx context.Context) (*checkpoint.Checkpoint, error) {
	if s.cfg.NoCheckpoint {
		for _, p := range s.ps {
			if err := p.Init(ctx); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	adm, err := NewAdmin(s.cfg.Producer.Kafka...)
	if err != nil {
		return nil, err
	}
	err = EnsureCheckpointTopic(ctx, adm, s.cfg.CheckpointTopic)
	adm.Close()
	if err != nil {
		return nil, err
	}
	// The producer learns a topic's batch limit when it first produces to
	// it: the checkpoint topic's is read before the first commit.
	if _, err := s.limits.Of(ctx, s.cfg.CheckpointTopic); err != nil {
		return nil, err
	}
	outcomes := s.outcomes(ctx)
	inited := map[int64]int16{}
	for _, p := range s.ps {
		if err := p.Init(ctx); err != nil {
			return nil, err
		}
		if len(outcomes) == 0 {
			continue
		}
		if id, epoch, err := p.cl.ProducerID(ctx); err == nil {
			inited[id] = epoch
		}
	}
	keepUnchanged(outcomes, inited)
	st, err := s.settle(ctx, outcomes)
	if err != nil {
		return nil, fmt.Errorf("loading checkpoint %q: %w", s.cfg.Name, err)
	}
	if st.Waited > 0 {
		s.cfg.Log.Info().Int64("stable_offset", st.FirstStable).Int64("high_watermark", st.HighWatermark).Dur("waited", st.Waited).
			Msg("the checkpoint partition had a transaction open; read the checkpoint once it ended")
	}
	cp, err := LoadCheckpoint(ctx, s.cfg.CheckpointTopic, s.cfg.Name, s.cfg.Producer.Kafka...)
	switch {
	case errors.Is(err, checkpoint.ErrCheckpointMissing):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("loading checkpoint %q: %w", s.cfg.Name, err)
	}
	return cp, nil
}

// outcomes describes the session's transactional ids (describeOutcomes);
// a failure is an unknown outcome.
func (s *Session) outcomes(ctx context.Context) map[int64]txnOutcome {
	if !s.transactional() {
		return nil
	}
	cl, err := NewClient(s.cfg.Producer.Kafka...)
	if err != nil {
		return nil
	}
	defer cl.Close()
	dctx, cancel := context.WithTimeout(ctx, repairAfter)
	defer cancel()
	out := describeOutcomes(dctx, cl, s.cfg.TransactionalIDs, s.cfg.Log)
	if len(out) > 0 {
		s.cfg.Log.Debug().Str("outcomes", joinOutcomes(out)).Msg("the decided outcomes of the transactional ids' last transactions")
	}
	return out
}

// settle is Settle within SettleWait. With outcomes known or
// OtherWriters, it first waits repairAfter; if the partition has not
// settled by then, it fences the other writers, repairs what it may
// (repairHanging; both bounded by repairWithin) and waits for the rest of
// SettleWait.
func (s *Session) settle(ctx context.Context, outcomes map[int64]txnOutcome) (Settled, error) {
	first := s.cfg.SettleWait
	if len(outcomes) > 0 || len(s.cfg.OtherWriters) > 0 {
		first = min(repairAfter, s.cfg.SettleWait)
	}
	st, err := Settle(ctx, s.cfg.CheckpointTopic, first, s.cfg.Producer.Kafka...)
	if !errors.Is(err, ErrUnsettled) || first == s.cfg.SettleWait {
		return st, err
	}
	s.fenceOthers(ctx)
	if len(outcomes) > 0 {
		cl, cerr := NewClient(s.cfg.Producer.Kafka...)
		if cerr != nil {
			return st, err
		}
		rctx, cancel := context.WithTimeout(ctx, repairWithin)
		repairHanging(rctx, cl, s.cfg.CheckpointTopic, s.cfg.Topics, outcomes, s.cfg.OnRepaired, s.cfg.Log)
		cancel()
		cl.Close()
	}
	st, err = Settle(ctx, s.cfg.CheckpointTopic, s.cfg.SettleWait-first, s.cfg.Producer.Kafka...)
	st.Waited += first
	return st, err
}

// fenceOthers fences OtherWriters, each within repairWithin.
func (s *Session) fenceOthers(ctx context.Context) {
	for _, id := range s.cfg.OtherWriters {
		fctx, cancel := context.WithTimeout(ctx, repairWithin)
		err := Fence(fctx, id, s.cfg.Producer.Kafka...)
		cancel()
		if err != nil {
			s.cfg.Log.Warn().Err(err).Str("transactional_id", id).
				Msg("the checkpoint partition has a transaction open and the other writer of the checkpoint could not be fenced: waiting for the open transaction to end or time out")
			continue
		}
		s.cfg.Log.Info().Str("transactional_id", id).
			Msg("the checkpoint partition had a transaction open: fenced the other writer of the checkpoint (a recover stopped before its end), which ends its open transaction")
	}
}

// Produce begins a Kafka transaction if none is open (exactly-once) and
// hands rec over without waiting for its acknowledgement.
//
// A record that cannot fit in a batch of its topic alone
// (TopicLimits.Check) is not produced: a *TooLargeError is returned, and
// the session goes on. With PartitionFail, a partition count change of a
// topic the session writes to (PartitionChangeError) is returned instead,
// before rec is produced.
func (s *Session) Produce(ctx context.Context, rec *kgo.Record) error {
	if err := s.limits.Check(ctx, rec); err != nil {
		return err
	}
	if err := s.cfg.Producer.Partitions.Err(); err != nil {
		return err
	}
	if err := s.p().Begin(); err != nil {
		return err
	}
	s.p().Produce(ctx, rec)
	return nil
}

// Commit writes cp after the records produced since the last Commit:
// exactly-once in the same transaction, which it then commits;
// at-least-once once they are acknowledged, without waiting for cp's own
// acknowledgement (the next Commit or Close waits for it).
//
// Exactly-once, a nil return means the transaction is committed: Kafka
// decided it, and its markers make its records and cp visible to
// read_committed consumers, in offset order, shortly after. The next
// transaction uses the next transactional id in turn, so that it produces
// while Kafka still writes this one's markers: with one id, Apache Kafka
// answers the next transaction's first produce with
// CONCURRENT_TRANSACTIONS until then. Its records follow this one's in
// every partition (they are produced after this one's are acknowledged),
// and a partition's last stable offset stays before this one's records
// until its marker is written, so consumers still see binlog order.
//
// With NoCheckpoint it ignores cp (which may be nil).
func (s *Session) Commit(ctx context.Context, cp *checkpoint.Checkpoint) error {
	if s.cfg.NoCheckpoint {
		return s.commitRecords(ctx)
	}
	rec, err := cp.Record(s.cfg.CheckpointTopic)
	if err != nil {
		return err
	}
	if !s.transactional() {
		if err := s.flush(ctx); err != nil {
			return err
		}
		if err := s.cfg.Producer.Partitions.Err(); err != nil {
			return err
		}
		// Records go on flowing while the checkpoint is acknowledged: its
		// produce outlives ctx, and Close waits for it.
		s.p().Produce(context.WithoutCancel(ctx), rec)
		return nil
	}
	if err := s.Produce(ctx, rec); err != nil {
		return err
	}
	if err := s.flush(ctx); err != nil {
		return err
	}
	// A record of the transaction may have met a partition count change
	// (placed by the old count): nothing after the change is committed.
	if err := s.cfg.Producer.Partitions.Err(); err != nil {
		return err
	}
	if err := s.p().Commit(ctx); err != nil {
		return fmt.Errorf("%w: committing Kafka transaction with checkpoint %s: %w", ErrCommitUnknown, cp.GTIDSet, err)
	}
	s.cur = (s.cur + 1) % len(s.ps)
	return nil
}

// commitRecords is Commit without a checkpoint: it waits for the records
// and commits the open transaction, if any (exactly-once).
func (s *Session) commitRecords(ctx context.Context) error {
	if err := s.flush(ctx); err != nil {
		return err
	}
	if err := s.cfg.Producer.Partitions.Err(); err != nil {
		return err
	}
	if err := s.p().Commit(ctx); err != nil {
		return fmt.Errorf("%w: committing Kafka transaction of %q: %w", ErrCommitUnknown, s.cfg.TransactionalIDs[s.cur], err)
	}
	s.cur = (s.cur + 1) % len(s.ps)
	return nil
}

// flush waits for every record produced so far; a record that failed
// ends the wait at once and is returned, named (Describe).
func (s *Session) flush(ctx context.Context) error {
	err := s.p().Flush(ctx)
	if perr := s.p().Err(); perr != nil {
		return fmt.Errorf("producing records: %w", perr)
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotAcknowledged, err)
	}
	return nil
}

// Abort ends the open transaction without committing it, after the error
// cause ended the session: with an abort at the broker, or, when cause is
// a stale epoch (StaleEpoch), only locally (an abort would bump the epoch,
// KIP-588, and fence the producer that took over; the broker or the next
// session aborts it). Records still buffered are dropped. Failures are
// logged.
func (s *Session) Abort(ctx context.Context, cause error) {
	switch {
	case s.closed:
	case !s.transactional():
		if err := s.p().cl.AbortBufferedRecords(ctx); err != nil {
			s.cfg.Log.Debug().Err(err).Msg("dropping buffered records")
		}
	case StaleEpoch(cause):
		s.p().Drop(ctx)
	default:
		s.p().Abort(ctx)
	}
}

// Close waits until every record produced is acknowledged (the last
// at-least-once checkpoint), or one failed, or ctx ends, and then
// releases the clients; records still buffered fail. A second Close does
// nothing.
func (s *Session) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.flush(ctx)
	s.closeClients()
	return err
}

func (s *Session) closeClients() {
	for _, p := range s.ps {
		p.Close()
	}
	s.limits.Close()
}

// Buffered is the number of records produced and not yet acknowledged,
// over the session's producers. It is safe to call from any goroutine
// (a metric's scrape).
func (s *Session) Buffered() int64 {
	var n int64
	for _, p := range s.ps { // fixed by NewSession
		n += p.Buffered()
	}
	return n
}

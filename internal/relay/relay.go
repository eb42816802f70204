package relay

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/route"
)

// Relay routes the outbox rows of one binlog source to Kafka: the loop
// with the live checkpoint, plus what only the live router does: the
// election, the retry of sessions, and where a session starts.
type Relay struct {
	loop

	// cluster reaches the brokers; startAt resolves --start without a
	// checkpoint (checkpoint.StartAt on the source's server).
	cluster cluster
	startAt func(ctx context.Context, start string) (*gtid.Set, error)
	known   outcomes // what earlier sessions of runRetrying know of their commits
}

// New returns a Relay reading from reader. It does not connect to Kafka
// until Run.
func New(cfg Config, reader *binlog.Reader) (*Relay, error) {
	r, err := newRelay(cfg, reader)
	if err != nil {
		return nil, err
	}
	r.startAt = func(ctx context.Context, start string) (*gtid.Set, error) {
		return checkpoint.StartAt(ctx, start, reader, r.log)
	}
	return r, nil
}

// newRelay returns a Relay reading from source and reaching the brokers of
// cfg.Kafka; tests replace its kafka and startAt.
func newRelay(cfg Config, source Source) (*Relay, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	router, err := route.New(cfg.Route)
	if err != nil {
		return nil, err
	}
	r := &Relay{loop: loop{cfg: cfg, source: source, router: router,
		log: cfg.Logger.With().Str("component", "relay").Str("name", cfg.Name).Logger()}}
	r.ts.limit = cfg.MaxBufferedRecords
	r.outage = newOutage(r.log, cfg.Metrics)
	// Every client of the relay reports its failed dials to the outage.
	r.cfg.Kafka = append(slices.Clip(r.cfg.Kafka), kgo.WithHooks(r.outage))
	r.cluster = brokers{cfg: &r.cfg, log: r.log, failed: r.ts.note}
	r.startAt = func(_ context.Context, start string) (*gtid.Set, error) {
		return checkpoint.ResolveStart(start, source.Server())
	}
	return r, nil
}

// reset clears the state of a previous active period.
func (r *Relay) reset() {
	r.at, r.cur, r.events, r.commits = position{}, commitPoint{}, 0, 0
	r.overran.Store(false)
	r.ts.reset()
}

// Run routes until ctx is cancelled or a fatal error occurs. On
// cancellation it finishes the binlog transaction in progress (or, after
// half ShutdownTimeout, commits inside it), commits, and returns nil; if
// that takes longer than ShutdownTimeout it aborts the open Kafka
// transaction and returns an error wrapping ErrShutdownTimeout.
//
// With HA, Run first waits to be elected; when it loses the active role
// it stops routing (an uncommitted Kafka transaction is aborted or fenced)
// and waits to be elected again.
func (r *Relay) Run(ctx context.Context) error {
	if !r.cfg.HA {
		return r.runRetrying(ctx)
	}
	// The election group consumes the checkpoint topic's one partition.
	if err := r.cluster.ensureCheckpointTopic(ctx); err != nil {
		return err
	}
	e, err := kafka.NewElector(kafka.ElectConfig{Kafka: r.cfg.Kafka, Name: r.cfg.Name,
		CheckpointTopic: r.cfg.CheckpointTopic, SessionTimeout: r.cfg.HATimeout, Logger: r.cfg.Logger})
	if err != nil {
		return err
	}
	defer e.Close()
	for {
		lctx, err := e.Lead(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil // stopped while standing by
			}
			return err
		}
		err = r.runRetrying(lctx)
		switch {
		case ctx.Err() != nil:
			return err
		case lctx.Err() != nil:
			r.log.Warn().AnErr("last_error", err).Msg("no longer the active router; standing by")
		default:
			return err
		}
	}
}

// runActive routes as the active router: fence, load the checkpoint,
// stream until ctx ends or an error.
func (r *Relay) runActive(ctx context.Context) error {
	r.reset()
	sink, err := r.cluster.newSink()
	if err != nil {
		return err
	}
	out := reportTransactions(sink, r.cfg.Delivery == ExactlyOnce, r.cfg.Metrics)
	r.out = out
	defer func() {
		// Nothing is waited for here: a stop waits in finish.
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = out.Close(done)
	}()

	// Opening the sink (exactly-once) fences any older instance with the
	// same transactional id and aborts its open transaction, and waits
	// for the checkpoint partition to settle, so the checkpoint read is
	// final.
	cp, err := out.Open(ctx)
	if err != nil {
		return err
	}
	start, err := r.startPosition(ctx, cp)
	if err != nil {
		return err
	}
	if err := r.checkOutcomes(&r.known, start); err != nil {
		return err
	}
	r.at.committed, r.at.pending = start, start.Clone()
	r.ts.forget(func(g string) bool { return covers(start, g) })
	r.at.layouts = nil
	if cp != nil {
		r.at.layouts = cp.Layouts
	}
	r.source.SetLayouts(r.at.layouts)
	r.at.xa = preparedFrom(cp)
	r.source.SetPrepared(r.at.xa)
	r.cur.last = time.Now()
	var resume binlog.Resume
	if cp != nil && cp.TxnGTID != "" && cp.TxnRows > 0 {
		resume = binlog.Resume{GTID: cp.TxnGTID, Rows: cp.TxnRows}
		r.at.openGTID, r.at.openRows = cp.TxnGTID, cp.TxnRows
		r.at.partial = true
	}
	server := r.source.Server()
	ev := r.log.Info().Str("gtid_set", start.String()).Str("delivery", string(r.cfg.Delivery)).
		Str("flavor", string(server.Flavor)).Str("server_version", server.Version)
	if resume.GTID != "" {
		ev.Str("txn_gtid", resume.GTID).Int("txn_rows", resume.Rows)
	}
	if cp != nil {
		ev.Time("checkpoint_time", cp.Time).Msg("resuming from checkpoint")
	} else {
		ev.Str("start", r.cfg.Start).Msg("no checkpoint stored; starting")
	}

	readCtx, stopReading := context.WithCancel(context.WithoutCancel(ctx))
	defer stopReading()
	q := binlog.NewQueue(r.cfg.QueueRows, r.cfg.QueueBytes)
	readErr := make(chan error, 1)
	go func() { readErr <- r.source.RunResume(readCtx, start, resume, q) }()
	err = r.run(ctx, q)
	stopReading()
	rerr := <-readErr
	if errors.Is(err, binlog.ErrReaderStopped) {
		err = nil
		if rerr != nil {
			err = &sourceError{rerr}
		}
	}
	return err
}

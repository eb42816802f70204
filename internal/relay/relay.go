package relay

import (
	"context"
	"slices"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
)

// Relay routes the outbox rows of one binlog source to Kafka: the loop
// with the live checkpoint (pipeline.Live), plus what only the live
// router does: the election, the retry of sessions, where a session
// starts, the names of a fenced producer, Kafka outages, and the age of
// the open Kafka transaction.
type Relay struct {
	cfg    Config
	log    zerolog.Logger
	source pipeline.Source
	loop   *pipeline.Loop // one session after another
	outage *outage        // the Kafka outage, across sessions

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
// cfg.Kafka; tests replace its cluster and startAt.
func newRelay(cfg Config, source pipeline.Source) (*Relay, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &Relay{cfg: cfg, source: source,
		log: cfg.Logger.With().Str("component", "relay").Str("name", cfg.Name).Logger()}
	r.outage = newOutage(r.log, cfg.Metrics)
	loop, err := pipeline.NewLive(cfg.Config, pipeline.Live{
		Name: cfg.Name, Source: cfg.Source, Version: cfg.Version,
		ShutdownTimeout: cfg.ShutdownTimeout, Log: r.log,
		Committed: r.outage.resumed, Fenced: r.fenced,
	}, source)
	if err != nil {
		return nil, err
	}
	r.loop = loop
	// Every client of the relay reports its failed dials to the outage.
	r.cfg.Kafka = append(slices.Clip(r.cfg.Kafka), kgo.WithHooks(r.outage))
	r.cluster = brokers{cfg: &r.cfg, log: r.log, failed: loop.NoteRefused}
	r.startAt = func(_ context.Context, start string) (*gtid.Set, error) {
		return checkpoint.ResolveStart(start, source.Server())
	}
	return r, nil
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
	r.loop.Reset()
	sink, err := r.cluster.newSink()
	if err != nil {
		return err
	}
	out := reportTransactions(sink, r.cfg.Delivery == ExactlyOnce, r.cfg.Metrics)
	defer func() {
		// Nothing is waited for here: a stop waits in the loop.
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
	if err := cp.Unfinished(); err != nil {
		return err
	}
	start, err := r.startPosition(ctx, cp)
	if err != nil {
		return err
	}
	if err := r.checkOutcomes(&r.known, start); err != nil {
		return err
	}
	server := r.source.Server()
	ev := r.log.Info().Str("gtid_set", start.String()).Str("delivery", string(r.cfg.Delivery)).
		Str("flavor", string(server.Flavor)).Str("server_version", server.Version)
	if cp != nil && cp.TxnGTID != "" && cp.TxnRows > 0 {
		ev.Str("txn_gtid", cp.TxnGTID).Int("txn_rows", cp.TxnRows)
	}
	if cp != nil {
		ev.Time("checkpoint_time", cp.Time).Msg("resuming from checkpoint")
	} else {
		ev.Str("start", r.cfg.Start).Msg("no checkpoint stored; starting")
	}
	return r.loop.RunSession(ctx, out, start, cp)
}

package relay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/acl"
	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Relay routes the outbox rows of one binlog source to Kafka.
type Relay struct {
	cfg    Config
	reader *binlog.Reader
	router *route.Router
	log    zerolog.Logger

	cl     *kgo.Client
	limits *topicLimits // this session's record batch limit per topic

	// committed is the GTID set the stored checkpoint covers; pending
	// also covers transactions handed to Kafka since.
	committed, pending *gtid.Set
	pendingPos         binlog.Position
	pendingTime        time.Time                     // source commit time of the last pending transaction
	pendingLayouts     map[string][]schema.ColumnDef // outbox column definitions after the last pending transaction
	pendingTxns        int
	pendingXA          []binlog.PreparedXA // XA transactions prepared within pending
	inTxn              bool                // exactly-once: a Kafka transaction is open
	records            int                 // records since the last commit point
	since              time.Time
	lastCheckpoint     time.Time
	partial            bool // inside a binlog transaction (not at a boundary)
	txnBegan           time.Time
	// open is the binlog transaction whose rows are being produced and
	// openRows how many of its outbox rows were produced (counting those
	// of earlier sessions when resumed inside it): the position a
	// checkpoint inside it records. openGTID survives a resume, where the
	// Txn value is new.
	open     *binlog.Txn
	openGTID string
	openRows int
	overran  atomic.Bool // the stop passed ShutdownTimeout
	commits  int         // commit points in this active session
	progress func()      // called when Kafka took a commit or nothing waits
	events   uint64

	errMu       sync.Mutex
	firstErr    error
	flushCancel context.CancelFunc // ends the flush in progress at the first produce error
	promise     func(*kgo.Record, error)
}

// New returns a Relay reading from reader. It does not connect to Kafka
// until Run.
func New(cfg Config, reader *binlog.Reader) (*Relay, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	router, err := route.New(cfg.Route)
	if err != nil {
		return nil, err
	}
	r := &Relay{cfg: cfg, reader: reader, router: router,
		log: cfg.Logger.With().Str("component", "relay").Str("name", cfg.Name).Logger()}
	r.promise = r.onProduced
	return r, nil
}

// reset clears the state of a previous active period.
func (r *Relay) reset() {
	r.inTxn, r.records, r.pendingTxns, r.partial, r.events, r.commits = false, 0, 0, false, 0, 0
	r.open, r.openGTID, r.openRows = nil, "", 0
	r.overran.Store(false)
	r.errMu.Lock()
	r.firstErr = nil
	r.errMu.Unlock()
}

func (r *Relay) onProduced(rec *kgo.Record, err error) {
	if err == nil {
		return
	}
	r.errMu.Lock()
	if r.firstErr == nil {
		r.firstErr = describe(rec, err)
	}
	if r.flushCancel != nil {
		r.flushCancel() // no flush can succeed now; fail it at once
	}
	r.errMu.Unlock()
}

func (r *Relay) produceErr() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.firstErr
}

func (r *Relay) clientOpts() []kgo.Opt {
	opts := append([]kgo.Opt{}, r.cfg.Kafka...)
	opts = append(opts,
		kgo.WithLogger(logging.Kgo(r.cfg.Logger)),
		kgo.RecordPartitioner(route.Partitioner()),
		kgo.MaxBufferedRecords(r.cfg.MaxBufferedRecords),
		kgo.MaxBufferedBytes(r.cfg.MaxBufferedBytes),
		kgo.ProducerBatchMaxBytesFn(r.limits.batchMax),
		kgo.ProducerLinger(0),
	)
	if *r.cfg.AutoCreateTopics {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	if r.cfg.Delivery == ExactlyOnce {
		opts = append(opts,
			kgo.TransactionalID(TransactionalID(r.cfg.Name)),
			kgo.TransactionTimeout(r.cfg.TransactionTimeout),
		)
	}
	return opts
}

// Run routes until ctx is cancelled or a fatal error occurs. On
// cancellation it finishes the binlog transaction in progress, commits,
// and returns nil; if that takes longer than ShutdownTimeout it aborts the
// open Kafka transaction and returns the context's error.
//
// With HA, Run first waits to be elected; when it loses the active role
// it stops routing (an uncommitted Kafka transaction is aborted or fenced)
// and waits to be elected again.
func (r *Relay) Run(ctx context.Context) error {
	if !r.cfg.HA {
		return r.runRetrying(ctx)
	}
	// The election group consumes the checkpoint topic's one partition.
	if err := r.ensureCheckpointTopic(ctx); err != nil {
		return err
	}
	e, err := newElector(r.cfg)
	if err != nil {
		return err
	}
	defer e.close()
	for {
		lctx, err := e.lead(ctx)
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
	r.limits = newTopicLimits(r.cfg.MaxMessageBytes, *r.cfg.AutoCreateTopics, r.log)
	cl, err := kgo.NewClient(r.clientOpts()...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	r.cl = cl
	r.limits.setClient(cl)
	defer cl.Close()

	if err := r.ensureCheckpointTopic(ctx); err != nil {
		return err
	}
	if _, err := r.limits.of(ctx, r.cfg.CheckpointTopic); err != nil {
		return err
	}
	if r.cfg.Delivery == ExactlyOnce {
		// Initialising the producer id fences any older instance with the
		// same transactional id and aborts its open transaction, so the
		// checkpoint read next is final.
		if _, _, err := cl.ProducerID(ctx); err != nil {
			return fmt.Errorf("initialising transactional producer %q: %w", TransactionalID(r.cfg.Name),
				acl.Hint(err, "WRITE", acl.TransactionalID(TransactionalID(r.cfg.Name))))
		}
	}
	start, cp, err := r.startPosition(ctx)
	if err != nil {
		return err
	}
	r.committed, r.pending = start, start.Clone()
	r.pendingLayouts = nil
	if cp != nil {
		r.pendingLayouts = cp.Layouts
	}
	r.reader.SetLayouts(r.pendingLayouts)
	r.pendingXA = preparedFrom(cp)
	r.reader.SetPrepared(r.pendingXA)
	r.lastCheckpoint = time.Now()
	var resume binlog.Resume
	if cp != nil && cp.TxnGTID != "" && cp.TxnRows > 0 {
		resume = binlog.Resume{GTID: cp.TxnGTID, Rows: cp.TxnRows}
		r.openGTID, r.openRows = cp.TxnGTID, cp.TxnRows
		r.partial = true
	}
	ev := r.log.Info().Str("gtid_set", start.String()).Str("delivery", string(r.cfg.Delivery)).
		Str("flavor", string(r.reader.Server().Flavor)).Str("server_version", r.reader.Server().Version)
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
	go func() { readErr <- r.reader.RunResume(readCtx, start, resume, q) }()
	err = r.loop(ctx, q)
	stopReading()
	rerr := <-readErr
	if errors.Is(err, errReaderStopped) {
		err = rerr
	}
	return err
}

// describe names the outbox row of a failed record: its event id and
// source transaction travel in its headers.
func describe(rec *kgo.Record, err error) error {
	var id, gtidText string
	for _, h := range rec.Headers {
		switch h.Key {
		case "id":
			id = string(h.Value)
		case "binlog_gtid":
			gtidText = string(h.Value)
		}
	}
	err = acl.Hint(err, "WRITE (and CREATE, unless the topic is created beforehand)", acl.Topic(rec.Topic))
	if errors.Is(err, kerr.MessageTooLarge) {
		err = fmt.Errorf("%w; %s", err, tooLargeHint(rec.Topic))
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		err = fmt.Errorf("%w; topic %s does not exist and the brokers did not create it: create it, or allow auto-creation (--auto-create-topics and the brokers' auto.create.topics.enable)", err, rec.Topic)
	}
	if id == "" {
		return fmt.Errorf("producing to topic %s: %w", rec.Topic, err)
	}
	return fmt.Errorf("producing event_id %s (transaction %s) to topic %s: %w", id, gtidText, rec.Topic, err)
}

// ensureCheckpointTopic uses its own client: the producer's may create
// topics automatically on a metadata request, with the broker's default
// (deleting) cleanup policy.
func (r *Relay) ensureCheckpointTopic(ctx context.Context) error {
	cl, err := kgo.NewClient(r.cfg.Kafka...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return checkpoint.EnsureTopic(ctx, kadm.NewClient(cl), r.cfg.CheckpointTopic)
}

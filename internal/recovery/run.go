package recovery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Defaults of Config.
const (
	// DefaultMargin is how much earlier than the window's start the
	// outbox topics are read for published ids, and how much earlier
	// than the checkpoint's time --since-checkpoint starts.
	DefaultMargin = 5 * time.Minute
	// DefaultChunk is the rows read per query.
	DefaultChunk = 1000
	// DefaultMaxKnownIDs caps the published ids held in memory.
	DefaultMaxKnownIDs = 5_000_000
	// DefaultCommitInterval is the longest a recovery's Kafka
	// transaction stays open before the next chunk boundary commits it.
	DefaultCommitInterval = 10 * time.Second
	// dryRunIDs is how many ids a dry run prints per topic.
	dryRunIDs = 5
)

// Config configures one recovery. Zero values take the defaults noted.
type Config struct {
	Tables     []schema.TableName // the outbox tables, read one after another
	Columns    schema.Columns     // their column mapping
	Zone       *time.Location     // time zone of a DATETIME creation time; required for one
	UUIDBinary binlog.UUIDBinary  // byte order of a 16-byte binary event id

	// Since: only rows created at or after it (zero: no time bound).
	Since time.Time
	// Where: only rows for which this SQL condition holds ("" none).
	// At least one of Since and Where is required.
	Where string
	// CheckpointTime is when the router's stored checkpoint was written
	// (zero: none). The gap after it is compared with the window and the
	// table: what they leave out is reported (Summary.Uncovered).
	CheckpointTime time.Time
	// Margin: the outbox topics are read from Since - Margin (by record
	// timestamp) for the ids already published; from their start when
	// Since is zero. Default DefaultMargin.
	Margin time.Duration
	// Chunk is the rows read per query. Default DefaultChunk.
	Chunk int
	// Order is the order each table is read and published in (see
	// Order's constants). Default DefaultOrder.
	Order Order
	// CommitRecords: a Kafka transaction is committed every this many
	// records, and at the end. Default 10,000.
	CommitRecords int
	// MaxKnownIDs caps the published ids read from Kafka. Default
	// DefaultMaxKnownIDs.
	MaxKnownIDs int
	// Rate caps the rows read per second, counted from the first chunk
	// (pacer); 0: no cap.
	Rate int
	// CommitInterval: a Kafka transaction open this long is committed
	// after the chunk that reaches it, so that a slow (Rate) recovery
	// stays within the transaction timeout. Default
	// DefaultCommitInterval.
	CommitInterval time.Duration
	// ProgressEvery is the interval of the progress lines. Default 5 s.
	ProgressEvery time.Duration
	// Observe, if set, is given the counts so far (Summary.Rows, Skipped,
	// Published) after each chunk and at the end, from Run's goroutine.
	Observe func(scanned, skipped, published int64)

	// Route builds the records, as the live router does.
	Route route.Config
	// OnInvalid is what a row that cannot be routed does, as in the
	// router: pipeline.InvalidFail (the default) stops the recovery before
	// it; pipeline.InvalidDeadLetter produces route.DeadLetter's record to
	// DeadLetterTopic (default pipeline.DefaultDeadLetterTopic) in its
	// place. That topic is read for published ids too, so a rerun does
	// not divert a row twice.
	OnInvalid       pipeline.InvalidPolicy
	DeadLetterTopic string
	// Producer configures the producer (connection options, buffer,
	// limits); its TransactionalID is ignored.
	Producer kafka.Config
	// TransactionalID is the recovery's own transactional id; never a
	// router's. Required unless DryRun.
	TransactionalID string
	// Checkpoint, if set, returns the record of the router's checkpoint
	// at snap (its GTID set), in the format run reads. It is called once
	// every row of the window is produced, and the record is produced in
	// the recovery's last Kafka transaction, which is then committed:
	// the last records and the checkpoint are committed together or not
	// at all. An error aborts that transaction. Not called with DryRun.
	Checkpoint func(ctx context.Context, snap Snapshot) (*kgo.Record, error)
	// Progress, if set, returns the record of the router's checkpoint
	// holding the recovery's progress (checkpoint.Recovery): it is
	// produced in every Kafka transaction but the last, whose record
	// Checkpoint gives. Not called with DryRun.
	Progress func(ctx context.Context, progress *checkpoint.Recovery) (*kgo.Record, error)
	// Resume is the progress an earlier run committed (the router's
	// checkpoint record holds it), or nil. Run goes on from it when its
	// Window is this one's and the binlog between its snapshot and this
	// one can be read from Binlog (resume.go); else it reads the whole
	// window again.
	Resume *checkpoint.Recovery
	// Binlog is the outbox tables' binlog (a binlog.Reader of the
	// router's tables), read on a resume.
	Binlog pipeline.Source
	// DryRun reads and counts, produces nothing.
	DryRun bool
	Logger zerolog.Logger
}

func (c *Config) setDefaults() {
	if c.Margin == 0 {
		c.Margin = DefaultMargin
	}
	if c.Chunk <= 0 {
		c.Chunk = DefaultChunk
	}
	if c.Order == "" {
		c.Order = DefaultOrder
	}
	if c.CommitRecords <= 0 {
		c.CommitRecords = 10_000
	}
	if c.MaxKnownIDs <= 0 {
		c.MaxKnownIDs = DefaultMaxKnownIDs
	}
	if c.CommitInterval <= 0 {
		c.CommitInterval = DefaultCommitInterval
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = 5 * time.Second
	}
	if c.OnInvalid == "" {
		c.OnInvalid = pipeline.DefaultOnInvalid
	}
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = pipeline.DefaultDeadLetterTopic
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Since.IsZero() && c.Where == "" {
		errs = append(errs, errors.New("no window: give --since TIME, --since-checkpoint or --where CONDITION"))
	}
	if len(c.Tables) == 0 {
		errs = append(errs, errors.New("no outbox table: set --outbox-table"))
	}
	if !c.DryRun && c.TransactionalID == "" {
		errs = append(errs, errors.New("no transactional id for the recovery producer"))
	}
	if c.Margin < 0 {
		errs = append(errs, fmt.Errorf("margin %s: use 0 or more", c.Margin))
	}
	if c.Rate < 0 {
		errs = append(errs, fmt.Errorf("rate %d rows/s: use 0 (no cap) or more", c.Rate))
	}
	if !c.Order.Valid() {
		errs = append(errs, fmt.Errorf("order %q: use %s, %s or %s", c.Order, OrderAuto, OrderKey, OrderCreatedAt))
	}
	return errors.Join(errs...)
}

// TopicCount is what one topic's share of the window came to.
type TopicCount struct {
	Topic     string
	InWindow  int64    // rows of the window routed to the topic
	Known     int64    // of those, already in Kafka (skipped)
	Published int64    // of those, published (with DryRun: would be)
	FirstIDs  []string // the first few ids published (would be)
}

// Summary is what a recovery did.
type Summary struct {
	// Snapshot is the checkpoint to write: the position the recovery read
	// at, or on a resume the first run's (Resumed).
	Snapshot Snapshot
	// Read is the position this run read the table at (Snapshot unless
	// resumed).
	Read Snapshot
	// Resumed is the earlier run's progress this run went on from, or
	// nil.
	Resumed *checkpoint.Recovery
	// Streamed: rows of the window committed after Snapshot, which run
	// publishes from there (on a resume; skipped here).
	Streamed int64
	KnownIDs int   // distinct ids read from the outbox topics
	Records  int64 // records read from the outbox topics
	Topics   []*TopicCount
	Orders   []TableOrder // the order each table was (would be) read in, and why
	// Uncovered: per table, what of the gap after the checkpoint the
	// window or the table leaves out (only tables with something).
	Uncovered []Uncovered
	Rows      int64 // rows of the window read
	Skipped   int64 // already in Kafka
	Published int64 // published, committed (DryRun: would be); dead letters included
	// DeadLettered: rows that could not be routed, produced to the
	// dead-letter topic (DryRun: would be), committed or not.
	DeadLettered int64
	// Reading is the time from the snapshot to the last row read.
	Reading time.Duration
	// Checkpointed: the record Config.Checkpoint returned was committed
	// with the last records.
	Checkpointed bool
	DryRun       bool
	Elapsed      time.Duration
}

// sink is the Kafka side of a recovery (kafka.Session).
type sink interface {
	Produce(ctx context.Context, rec *kgo.Record) error
	Commit(ctx context.Context, cp *checkpoint.Checkpoint) error
	Abort(ctx context.Context, cause error)
	Close(ctx context.Context) error
}

// Run recovers the window of cfg from the outbox tables of db, a pool of
// the source server of flavor (see the package documentation for the
// contract), and returns what it did. The router's checkpoint is
// committed with the last records when cfg.Checkpoint is set
// (Summary.Checkpointed), and not written otherwise.
func Run(ctx context.Context, db *sql.DB, flavor gtid.Flavor, cfg Config) (Summary, error) {
	start := time.Now()
	cfg.setDefaults()
	sum := Summary{DryRun: cfg.DryRun}
	if err := cfg.validate(); err != nil {
		return sum, err
	}
	log := cfg.Logger.With().Str("component", "recover").Logger()
	router, err := route.New(cfg.Route)
	if err != nil {
		return sum, err
	}
	pattern, err := route.TopicPattern(cfg.Route.TopicTemplate)
	if err != nil {
		return sum, err
	}
	if cfg.OnInvalid == pipeline.InvalidDeadLetter {
		// The rows diverted by an earlier run are known by their ids too.
		pattern = regexp.MustCompile("(?:" + pattern.String() + ")|^" + regexp.QuoteMeta(cfg.DeadLetterTopic) + "$")
	}
	var sources []*source
	indexed := map[*source]bool{}
	for _, t := range cfg.Tables {
		s, err := inspectTable(ctx, db, t, cfg.Columns, cfg.Zone, !cfg.Since.IsZero())
		if err != nil {
			return sum, err
		}
		plan, err := planOrder(ctx, db, s, cfg.Order, cfg.Columns.CreatedAt)
		if err != nil {
			return sum, err
		}
		s.order, indexed[s] = plan.order, plan.indexed
		sum.Orders = append(sum.Orders, TableOrder{Table: t.String(), Order: plan.order, Reason: plan.reason})
		log.Info().Str("table", t.String()).Str("order", string(plan.order)).Str("reason", plan.reason).Msg("recovery read order")
		for _, w := range plan.warnings {
			log.Warn().Str("table", t.String()).Str("order", string(plan.order)).Msg(w)
		}
		sources = append(sources, s)
	}
	scanFrom := time.Time{}
	if !cfg.Since.IsZero() {
		scanFrom = cfg.Since.Add(-cfg.Margin)
	}
	log.Info().Time("since", cfg.Since).Str("where", cfg.Where).Time("kafka_from", scanFrom).Str("topics", pattern.String()).
		Msg("reading the event ids already in the outbox topics")
	scan, err := kafka.ScanIDs(ctx, kafka.IDScan{Topics: pattern, Since: scanFrom, MaxIDs: cfg.MaxKnownIDs, HeaderKey: route.HeaderID}, cfg.Producer.Kafka...)
	if err != nil {
		return sum, err
	}
	sum.KnownIDs, sum.Records = scan.IDs.Len(), scan.Records
	log.Info().Int("known_ids", sum.KnownIDs).Int64("records", scan.Records).Strs("topics", scan.Topics).Msg("event ids already published read")

	conn, err := db.Conn(ctx)
	if err != nil {
		return sum, fmt.Errorf("connecting for the snapshot: %w", err)
	}
	defer conn.Close()
	snap, err := begin(ctx, conn, flavor)
	if err != nil {
		return sum, err
	}
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") }()
	sum.Snapshot, sum.Read = snap, snap
	log.Info().Str("gtid", snap.GTID).Str("file", snap.File).Uint64("position", snap.Position).Msg("snapshot started")
	var streamed *kafka.IDSet
	if cfg.Resume != nil && !cfg.DryRun {
		if streamed, err = resume(ctx, &cfg, flavor, snap, log); err != nil {
			return sum, err
		}
		if streamed != nil {
			sum.Resumed = cfg.Resume
			sum.Snapshot = Snapshot{Flavor: flavor, File: cfg.Resume.SnapshotFile, Position: cfg.Resume.SnapshotPos, GTID: cfg.Resume.Snapshot}
		}
	}
	for _, src := range sources {
		u, err := src.uncovered(ctx, conn, cfg.CheckpointTime, cfg.Since)
		if err != nil {
			return sum, err
		}
		if msg := u.String(); msg != "" {
			sum.Uncovered = append(sum.Uncovered, u)
			log.Warn().Str("table", u.Table).Int64("rows_before_window", u.Before).Msg(msg)
		}
	}

	var out sink
	if !cfg.DryRun {
		if out, err = openSink(ctx, &cfg); err != nil {
			return sum, err
		}
	}
	p := &publisher{cfg: &cfg, router: router, known: scan.IDs, out: out, counts: map[string]*TopicCount{}, log: log, sum: &sum, last: time.Now(), indexed: indexed,
		streamed: streamed}
	err = p.run(ctx, conn, sources)
	for _, tc := range p.counts {
		sum.Topics = append(sum.Topics, tc)
	}
	sort.Slice(sum.Topics, func(i, j int) bool { return sum.Topics[i].Topic < sum.Topics[j].Topic })
	sum.Elapsed = time.Since(start)
	return sum, err
}

// publisher routes the rows of the window and publishes the unknown ones.
type publisher struct {
	cfg      *Config
	router   *route.Router
	known    *kafka.IDSet
	out      sink // nil: dry run
	counts   map[string]*TopicCount
	log      zerolog.Logger
	sum      *Summary
	pending  int64            // produced since the last commit
	txnStart time.Time        // the first produce since the last commit
	reading  time.Time        // the first chunk's start
	last     time.Time        // the last progress line
	indexed  map[*source]bool // created-at order: an index begins with the creation time column
	streamed *kafka.IDSet     // on a resume: the rows committed after the first snapshot (run publishes them)
	at       handled          // the last row handled
	resumed  bool             // the stored table was reached (resumeAt)
}

// handled is the last row of the window handled (published, skipped or
// dead-lettered): the progress a commit stores.
type handled struct {
	table string
	row   *cursor
}

func (p *publisher) run(ctx context.Context, conn *sql.Conn, sources []*source) error {
	err := p.tables(ctx, conn, sources)
	defer p.observe()
	if p.out == nil {
		return err
	}
	if err == nil && p.cfg.Checkpoint != nil {
		err = p.checkpoint(ctx)
	} else if err == nil && p.pending > 0 {
		err = p.commit(ctx)
	}
	if err != nil {
		p.out.Abort(context.WithoutCancel(ctx), err)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if cerr := p.out.Close(cctx); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

func (p *publisher) tables(ctx context.Context, conn *sql.Conn, sources []*source) error {
	txn := &binlog.Txn{Time: time.Now()} // no binlog transaction: the binlog_gtid header is empty
	pace := newPacer(p.cfg.Rate)
	p.reading = pace.start
	defer func() { p.sum.Reading = time.Since(pace.start) }()
	n := pace.chunk(p.cfg.Chunk)
	for _, s := range sources {
		var err error
		from, done := p.resumeAt(s)
		if done {
			continue
		}
		if from, err = p.resumable(ctx, conn, s, from); err != nil {
			return err
		}
		kp, err := newKeyProgress(ctx, conn, s, p.indexed[s])
		if err != nil {
			return err
		}
		p.at = handled{table: s.name.String(), row: from}
		for {
			before := p.sum.Rows
			last, err := s.chunk(ctx, conn, from, n, p.cfg.Since, p.cfg.Where, p.cfg.UUIDBinary, func(row *binlog.OutboxRow, at *cursor) error {
				p.at.row = at
				return p.row(ctx, row, txn)
			})
			if err != nil {
				return err
			}
			if last == nil {
				break
			}
			from = last
			kp.read(s.first, p.sum.Rows-before)
			p.progress(s, kp, last.position(s))
			if p.out != nil && p.pending > 0 && time.Since(p.txnStart) >= p.cfg.CommitInterval {
				if err := p.commit(ctx); err != nil {
					return err
				}
			}
			p.observe()
			if err := wait(ctx, pace.due(p.sum.Rows)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *publisher) row(ctx context.Context, row *binlog.OutboxRow, txn *binlog.Txn) error {
	p.sum.Rows++
	if p.streamed != nil && p.streamed.Has(row.EventID) {
		p.sum.Streamed++ // committed after the first snapshot: run publishes it
		return nil
	}
	rec, err := p.router.Route(row, txn)
	var re *route.RowError
	if err != nil {
		if re, err = p.refused(row, err); err != nil {
			return err
		}
		rec = route.DeadLetter(p.cfg.DeadLetterTopic, row, txn, re, func(*kgo.Record) bool { return true })
	}
	tc := p.counts[rec.Topic]
	if tc == nil {
		tc = &TopicCount{Topic: rec.Topic}
		p.counts[rec.Topic] = tc
	}
	tc.InWindow++
	if p.known.Has(row.EventID) {
		tc.Known++
		p.sum.Skipped++
		return nil
	}
	tc.Published++
	if len(tc.FirstIDs) < dryRunIDs {
		tc.FirstIDs = append(tc.FirstIDs, string(row.EventID))
	}
	if p.out == nil {
		p.sum.Published++
		return nil
	}
	if re == nil {
		err := p.out.Produce(ctx, rec)
		var tl *kafka.TooLargeError
		if errors.As(err, &tl) {
			re, err = p.refused(row, pipeline.TooLarge(row, txn, tl))
		}
		if err != nil {
			return err
		}
	}
	if re != nil {
		if _, err := pipeline.ProduceDeadLetter(ctx, p.out.Produce, p.cfg.DeadLetterTopic, row, txn, re); err != nil {
			return err
		}
	}
	if p.pending == 0 {
		p.txnStart = time.Now()
	}
	p.pending++
	if p.pending >= int64(p.cfg.CommitRecords) {
		return p.commit(ctx)
	}
	return nil
}

// commit commits the records produced since the last commit with the
// recovery's progress (Config.Progress), when set.
func (p *publisher) commit(ctx context.Context) error {
	if p.cfg.Progress != nil {
		rec, err := p.cfg.Progress(ctx, p.progressRecord())
		if err != nil {
			return fmt.Errorf("the recovery's progress: %w", err)
		}
		if err := p.out.Produce(ctx, rec); err != nil {
			return err
		}
	}
	return p.commitRecords(ctx)
}

// progressRecord is the progress a commit now stores.
func (p *publisher) progressRecord() *checkpoint.Recovery {
	r := &checkpoint.Recovery{Snapshot: p.sum.Snapshot.GTID, SnapshotFile: p.sum.Snapshot.File, SnapshotPos: p.sum.Snapshot.Position,
		Window: p.cfg.Window(), Table: p.at.table, Published: p.sum.Published + p.pending, Written: time.Now().UTC()}
	if p.sum.Resumed != nil {
		r.Published += p.sum.Resumed.Published
	}
	if c := p.at.row; c != nil {
		r.After, r.AfterNullCreated = []byte(fmt.Sprint(c.key)), c.nullCreated // chunk's keys are strings
	}
	return r
}

func (p *publisher) commitRecords(ctx context.Context) error {
	if err := p.out.Commit(ctx, nil); err != nil {
		return err
	}
	p.sum.Published += p.pending
	p.pending = 0
	return nil
}

// refused is the row error of a row the router refused with err, to be
// dead-lettered with OnInvalid dead-letter; else an error naming the row
// and the fix.
func (p *publisher) refused(row *binlog.OutboxRow, err error) (*route.RowError, error) {
	var re *route.RowError
	if p.cfg.OnInvalid != pipeline.InvalidDeadLetter || !errors.As(err, &re) {
		return nil, fmt.Errorf("row of %s.%s cannot be routed; nothing after it is published: %w; give recover the router's settings (--validate-json, --require-uuid, --topic-template, --contracts-dir), or divert such rows to the dead-letter topic with --on-invalid=dead-letter",
			row.Database, row.Table, err)
	}
	p.sum.DeadLettered++
	p.log.Warn().Err(re).Str("event_id", string(row.EventID)).Str("dead_letter_topic", p.cfg.DeadLetterTopic).
		Bool("dry_run", p.cfg.DryRun).Msg("outbox row diverted to the dead-letter topic")
	return re, nil
}

// observe hands the counts to Config.Observe.
func (p *publisher) observe() {
	if p.cfg.Observe != nil {
		p.cfg.Observe(p.sum.Rows, p.sum.Skipped, p.sum.Published)
	}
}

// checkpoint produces the router's checkpoint at the snapshot in the
// open transaction (one is begun if every record was committed already)
// and commits it with the records produced since the last commit.
func (p *publisher) checkpoint(ctx context.Context) error {
	p.log.Info().Int64("records", p.pending).Str("gtid", p.sum.Snapshot.GTID).
		Msg("committing the last records with the checkpoint at the snapshot")
	rec, err := p.cfg.Checkpoint(ctx, p.sum.Snapshot)
	if err != nil {
		return fmt.Errorf("the checkpoint at the snapshot (%s): %w", p.sum.Snapshot.GTID, err)
	}
	if err := p.out.Produce(ctx, rec); err != nil {
		return err
	}
	if err := p.commitRecords(ctx); err != nil {
		return err
	}
	p.sum.Checkpointed = true
	return nil
}

// progress logs a line every Config.ProgressEvery: rows read, skipped
// as already in Kafka, published (committed), the read rate since the
// first chunk, and the rows and time left of table s estimated from its
// keys or creation times (keyProgress) when it can be; last is the last
// row's cursor.position.
func (p *publisher) progress(s *source, kp *keyProgress, last any) {
	if time.Since(p.last) < p.cfg.ProgressEvery {
		return
	}
	p.last = time.Now()
	ev := p.log.Info().Str("table", s.name.String()).Int64("rows_scanned", p.sum.Rows).Int64("skipped", p.sum.Skipped).
		Int64("published", p.sum.Published).Bool("dry_run", p.cfg.DryRun)
	if secs := time.Since(p.reading).Seconds(); secs > 0 {
		ev = ev.Float64("rows_per_second", math.Round(float64(p.sum.Rows)/secs))
	}
	if rows, d, ok := kp.left(last); ok {
		ev = ev.Int64("table_rows_left_estimate", rows).Str("table_time_left", d.Round(time.Second).String())
	}
	ev.Msg("recovering")
}

// openSink opens a Kafka session with the recovery's own transactional
// id that writes no checkpoint; opening it fences an earlier recovery of
// the same id and aborts its open transaction.
func openSink(ctx context.Context, cfg *Config) (sink, error) {
	pc := cfg.Producer
	pc.Log = cfg.Logger
	s, err := kafka.OpenShadow(ctx, pc, cfg.TransactionalID)
	if err != nil {
		return nil, err // not a nil *Session in the interface
	}
	return s, nil
}

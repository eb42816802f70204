package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/recovery"
)

func init() { commands["recover"] = cmdRecover }

const recoverUsage = `usage: binlog-router recover (--since T | --since-checkpoint | --where COND) [--dry-run] [--force] [router flags]

Publishes the outbox rows the binlog can no longer give (a binlog purged
while the router was down, the pending rows of a polling relay, the last
hour on adoption), reading them from the outbox tables, then stores the
router's checkpoint (--name) at the position of that read, in the same
Kafka transaction as the last records: "run" streams on from there, so a
row committed during the recovery is published once, by run.

The rows are read in one consistent snapshot, in the order of
--recover-order (auto: primary key order for an AUTO_INCREMENT key, else
created_at order when --column-created-at is mapped, else key order with
a warning; the summary names the order of each table and why),
--recover-chunk rows per query, at most --recover-rate rows per second
(0: no cap). A row whose event id the outbox topics (those
--topic-template can name) already hold is skipped: the topics are read
with read_committed from --recover-margin before the window's start (from
their start with --where alone). The others become the records run would
give them (topic, key, partition, value, headers, timestamp), but for an
empty binlog_gtid header, produced with the transactional id
binlog-router-recover-<name> in transactions of --commit-records (or of
10 seconds, whichever ends first). A progress line goes to stderr every 5
seconds: rows scanned, skipped, published, rate, rows and time left.
With --metrics-addr it serves /metrics while it runs:
binlog_router_recover_rows_total{outcome="scanned|skipped|published"}.
A row that cannot be routed stops it, or with --on-invalid=dead-letter
goes to --dead-letter-topic, as in run.

  --since T           the rows created at or after T (RFC3339)
  --since-checkpoint  the rows created after the stored checkpoint's time,
                      less --recover-margin
  --where COND        the rows for which the SQL condition COND holds
                      (with --since: both)
  --dry-run           per topic: rows in the window, already in Kafka,
                      to publish, the first ids; publish nothing, store
                      no checkpoint
  --force             run although the router looks active (its
                      transactional ids are fenced before the first row)

Every flag of "run" is accepted, with its BINLOG_ROUTER_* variable: give
the command the router's command line or environment.

It refuses while a router of that name looks active (as "checkpoint set"),
then fences the router's transactional ids. The checkpoint is committed
with the last records. Each earlier Kafka transaction stores the
recovery's progress in the router's checkpoint record: a recover stopped
before its end leaves the records it committed and that progress, which
"run" refuses (exit 3). Run recover again with the same window: it goes
on from the last row stored, leaving the rows committed since its first
snapshot to run, and hands over at that snapshot (it reads the whole
window again when the binlog since then is gone; it publishes nothing
twice either way).

Exit status: 0 done (or a dry run); 1 error (nothing is lost: run it
again); 2 usage (flags, a table without a primary key of one column or
without the creation time column a time window needs).

Flags:
`

func cmdRecover(ctx context.Context, args []string) int {
	cfg := config.Default()
	fs := flag.NewFlagSet("recover", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), recoverUsage)
		fs.PrintDefaults()
	}
	cfg.Register(fs, config.CmdRecover)
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	log, err := logging.Stderr(logging.Format(cfg.LogFormat), cfg.LogLevel)
	if err != nil {
		return usageError(err)
	}
	if err := cfg.ValidateRecover(); err != nil {
		fmt.Fprintln(os.Stderr, "binlog-router recover:", err)
		return exitUsage
	}
	sum, err := runRecover(ctx, &cfg, log)
	for _, line := range recoverSummary(sum) {
		fmt.Println(line)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, recovery.ErrUnusableTable):
		fmt.Fprintln(os.Stderr, "binlog-router recover:", err)
		return exitUsage
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "binlog-router recover: stopped by a signal; what was committed stays: run recover again with the same window (it goes on where it stopped and publishes nothing twice), then run")
		return exitFatal
	}
	fmt.Fprintln(os.Stderr, "binlog-router recover:", err)
	return exitCode(err)
}

// runRecover checks that the router is stopped and fences it, recovers
// the window, and commits the router's checkpoint at the snapshot's
// position with the last recovered records.
func runRecover(ctx context.Context, cfg *config.Config, log zerolog.Logger) (recovery.Summary, error) {
	force := cfg.Checkpoint.Force
	if err := cfg.CheckKafkaAuth(ctx); err != nil {
		return recovery.Summary{}, err
	}
	adm, closeAdm, err := adminClient(cfg)
	if err != nil {
		return recovery.Summary{}, err
	}
	defer closeAdm()
	old, err := currentCheckpoint(ctx, cfg, adm)
	if err != nil {
		return recovery.Summary{}, err
	}
	reader, err := openSource(ctx, cfg, log)
	if err != nil {
		return recovery.Summary{}, err
	}
	defer reader.Close()
	if !force && !cfg.DryRun {
		if err := refuseIfActive(ctx, cfg, adm, old, reader, log); err != nil {
			return recovery.Summary{}, err
		}
	}
	// old may hold an unfinished recovery's progress; stored is the
	// router's own checkpoint, which that record keeps unchanged.
	stored := old
	if old != nil && old.Recovery != nil && old.GTIDSet == "" {
		stored = nil // the router had none before the recovery
	}
	var since time.Time
	switch {
	case cfg.Recover.Since.Given:
		since = cfg.Recover.Since.Time
	case cfg.Recover.SinceCheckpoint:
		if stored == nil {
			return recovery.Summary{}, fmt.Errorf("--since-checkpoint: router %q has no checkpoint in %q; give the window with --since TIME", cfg.Name, cfg.CheckpointTopic)
		}
		since = stored.Time.Add(-cfg.Recover.Margin)
	}
	server := reader.Server()
	zone, _ := server.DatetimeZone() // nil: a DATETIME creation time is refused by name
	rc := cfg.RecoverConfig(log, since, zone, kafka.RecoveryTransactionalID(cfg.Name))
	if stored != nil {
		rc.CheckpointTime = stored.Time
	}
	if old != nil && old.Recovery != nil && cfg.DryRun {
		log.Info().Str("table", old.Recovery.Table).Int64("published", old.Recovery.Published).
			Msg("an unfinished recovery is in the checkpoint: the dry run counts the whole window; recover goes on where it stopped")
	}
	if !cfg.DryRun {
		if err := fenceRouter(ctx, cfg, adm); err != nil {
			return recovery.Summary{}, err
		}
		if old != nil && old.Recovery != nil {
			rc.Resume = old.Recovery
			binlogReader, err := binlog.Open(ctx, recoverReaderConfig(cfg, log))
			if err != nil {
				return recovery.Summary{}, err
			}
			defer binlogReader.Close()
			rc.Binlog = binlogReader
		}
		rc.Progress = func(_ context.Context, r *checkpoint.Recovery) (*kgo.Record, error) {
			cp := checkpoint.Checkpoint{Name: cfg.Name, Flavor: string(server.Flavor), ServerID: server.ServerID, ServerUUID: server.ServerUUID, Source: cfg.MySQLAddr}
			if stored != nil {
				cp = *stored // unchanged but for the progress: run refuses it, a --since-checkpoint rerun reads its time
			}
			cp.Recovery = r
			cp.Version = version + checkpoint.OperatorMark
			return cp.Record(cfg.CheckpointTopic)
		}
		rc.Checkpoint = func(ctx context.Context, snap recovery.Snapshot) (*kgo.Record, error) {
			// A new connection: the server's executed set is read when
			// a reader opens, and the snapshot is later than reader's.
			now, err := openSource(ctx, cfg, log)
			if err != nil {
				return nil, err
			}
			defer now.Close()
			cp, err := newCheckpoint(ctx, cfg, now, snap.GTID)
			if err != nil {
				return nil, err
			}
			return cp.Record(cfg.CheckpointTopic)
		}
	}
	if cfg.MetricsAddr != "" {
		observe, stop, err := serveRecoverMetrics(ctx, cfg.MetricsAddr, log)
		if err != nil {
			return recovery.Summary{}, err
		}
		defer stop()
		rc.Observe = observe
	}
	log.Info().Time("since", since).Str("where", cfg.Recover.Where).Bool("dry_run", cfg.DryRun).
		Str("transactional_id", rc.TransactionalID).Msg("recover starting")
	sum, err := recovery.Run(ctx, reader.DB(), server.Flavor, rc)
	if err != nil || cfg.DryRun {
		return sum, err
	}
	was := "none"
	if stored != nil {
		was = fmt.Sprintf("%q written %s", stored.GTIDSet, stored.Time.Format(time.RFC3339))
	}
	fmt.Fprintf(os.Stderr, "checkpoint %q set to %q (was %s), committed with the last recovered records; run publishes what comes after it\n",
		cfg.Name, sum.Snapshot.GTID, was)
	return sum, nil
}

// recoverReaderConfig reads the router's outbox tables with a throw-away
// replica id, for the binlog between an unfinished recovery's snapshot
// and the next one's.
func recoverReaderConfig(cfg *config.Config, log zerolog.Logger) binlog.Config {
	rc := cfg.ReaderConfig(log, nil)
	rc.ServerID = randomServerID()
	rc.ReconnectTimeout = 10 * time.Second
	return rc
}

// fenceRouter creates the checkpoint topic if it is missing and
// initialises the router's transactional ids, as checkpoint set does: a
// router of that name still running (--force) is fenced and its open
// Kafka transactions aborted before the first row is published, so that
// only the recovery writes the router's checkpoint.
func fenceRouter(ctx context.Context, cfg *config.Config, adm *kadm.Client) error {
	if err := kafka.EnsureCheckpointTopic(ctx, adm, cfg.CheckpointTopic); err != nil {
		return err
	}
	for _, id := range kafka.TransactionalIDs(cfg.Name, cfg.KafkaTransactions) {
		if err := kafka.Fence(ctx, id, cfg.KafkaOpts()...); err != nil {
			return fmt.Errorf("fencing router %q before the recovery: %w", cfg.Name, err)
		}
	}
	return nil
}

// serveRecoverMetrics serves /metrics on addr with
// binlog_router_recover_rows_total{outcome="scanned|skipped|published"}
// (and the Go runtime's collectors) until stop is called; observe takes
// the recovery's counts so far (recovery.Config.Observe).
func serveRecoverMetrics(ctx context.Context, addr string, log zerolog.Logger) (observe func(scanned, skipped, published int64), stop func(), err error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	rows := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "binlog_router_recover_rows_total",
		Help: "Rows of the recovery's window: scanned (read from the outbox tables), skipped (already in Kafka), published (committed to Kafka).",
	}, []string{"outcome"})
	reg.MustRegister(rows)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics listener on --metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info().Str("metrics_addr", ln.Addr().String()).Msg("serving the recovery's metrics")
	var last [3]int64
	outcomes := [3]string{"scanned", "skipped", "published"}
	observe = func(scanned, skipped, published int64) {
		for i, v := range [3]int64{scanned, skipped, published} {
			if v > last[i] {
				rows.WithLabelValues(outcomes[i]).Add(float64(v - last[i]))
				last[i] = v
			}
		}
	}
	for _, o := range outcomes {
		rows.WithLabelValues(o)
	}
	stop = func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return observe, stop, nil
}

// recoverSummary is the lines recover prints on stdout: one per topic,
// then the totals.
func recoverSummary(s recovery.Summary) []string {
	if s.Snapshot.Flavor == "" {
		return nil
	}
	verb := "published"
	if s.DryRun {
		verb = "would be published"
	}
	var lines []string
	for _, o := range s.Orders {
		lines = append(lines, fmt.Sprintf("recover: table %s read in %s order: %s", o.Table, o.Order, o.Reason))
	}
	for _, u := range s.Uncovered {
		lines = append(lines, "recover: not recovered: "+u.String())
	}
	for _, t := range s.Topics {
		line := fmt.Sprintf("recover: topic %s: %d rows in the window, %d already in Kafka, %d %s", t.Topic, t.InWindow, t.Known, t.Published, verb)
		if len(t.FirstIDs) > 0 {
			line += "; first ids: " + strings.Join(t.FirstIDs, ", ")
		}
		lines = append(lines, line)
	}
	if r := s.Resumed; r != nil {
		after := "its first row"
		if len(r.After) > 0 {
			after = "key " + string(r.After)
		}
		lines = append(lines, fmt.Sprintf("recover: went on from an unfinished recovery (snapshot %q, %d records published) at table %s after %s; %d rows committed since its snapshot left to run",
			r.Snapshot, r.Published, r.Table, after, s.Streamed))
	}
	total := fmt.Sprintf("recover: %d rows in the window, %d already in Kafka (%d ids read from %d records), %d %s, snapshot at %q, %s (rows read in %s)",
		s.Rows, s.Skipped, s.KnownIDs, s.Records, s.Published, verb, s.Snapshot.GTID, s.Elapsed.Round(time.Millisecond), s.Reading.Round(time.Millisecond))
	if s.DeadLettered > 0 {
		total += fmt.Sprintf("; %d rows that cannot be routed diverted to the dead-letter topic", s.DeadLettered)
	}
	if s.DryRun {
		total += " (dry run: nothing published, no checkpoint stored)"
	}
	return append(lines, total)
}

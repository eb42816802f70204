package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/metrics"
	"github.com/binlog-router/binlog-router/internal/prune"
)

func init() { commands["prune"] = cmdPrune }

const pruneUsage = `usage: binlog-router prune --older-than AGE --prune-mysql-user U [--dry-run] [router flags]

Deletes the outbox rows the router has published that were created more
than AGE ago (7d, 36h, 1d12h), in batches of --prune-batch rows, each
DELETE its own transaction, pausing --prune-pause after each and
deleting at most --prune-rate rows a second. The cutoff is the earlier
of now - AGE and, less --prune-margin, the last moment whose committed
transactions the router's checkpoint (--name, --checkpoint-topic)
covers; without a checkpoint it refuses. Rows are compared by the
creation time column (--column-created-at, or the preset's).

It connects to --mysql-addr as --prune-mysql-user, a user with SELECT
and DELETE on the outbox tables only (docs/retention.md); the router's
--mysql-user stays read-only.

  --dry-run  count the rows it would delete, delete nothing

Every flag of "run" is accepted, with its BINLOG_ROUTER_* variable: give
the command the router's command line or environment.

A summary line goes to stdout, a progress line to stderr every few
seconds. Exit status: 0 done, or stopped by SIGTERM/SIGINT (the batches
before are deleted); 1 error (no checkpoint, the router behind); 2 usage.

Flags:
`

func cmdPrune(ctx context.Context, args []string) int {
	cfg := config.Default()
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), pruneUsage)
		fs.PrintDefaults()
	}
	cfg.Register(fs, config.CmdPrune)
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	log, err := logging.Stderr(logging.Format(cfg.LogFormat), cfg.LogLevel)
	if err != nil {
		return usageError(err)
	}
	if err := cfg.ValidatePrune(); err != nil {
		fmt.Fprintln(os.Stderr, "binlog-router prune:", err)
		return exitUsage
	}
	sum, err := runPrune(ctx, &cfg, log)
	if !sum.Cutoff.IsZero() {
		fmt.Println(pruneSummary(sum))
	}
	switch {
	case err == nil, ctx.Err() != nil:
		return exitOK
	case errors.Is(err, prune.ErrNoCreatedAt):
		fmt.Fprintln(os.Stderr, "binlog-router prune:", err)
		return exitUsage
	}
	fmt.Fprintln(os.Stderr, "binlog-router prune:", err)
	return exitFatal
}

// runPrune checks the Kafka credentials, then prunes once.
func runPrune(ctx context.Context, cfg *config.Config, log zerolog.Logger) (prune.Summary, error) {
	if err := cfg.CheckKafkaAuth(ctx); err != nil {
		return prune.Summary{}, err
	}
	return pruneOnce(ctx, cfg, log)
}

// schedulePrune is run's --prune-interval: a prune every interval, the
// first one interval after the start, until ctx ends. A prune's failure
// is logged (WARN) and the next one tried at the next interval: the
// router routes on. Each prune is counted in m (Metrics.Pruned). A stop cancels the prune in flight, whose batch the
// server rolls back.
func schedulePrune(ctx context.Context, cfg *config.Config, log zerolog.Logger, m *metrics.Metrics) {
	log = log.With().Str("component", "prune").Logger()
	log.Info().Dur("interval", cfg.Prune.Interval).Dur("older_than", cfg.Prune.OlderThan.D).Msg("pruning the outbox tables on a schedule")
	timer := time.NewTimer(cfg.Prune.Interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		sum, err := pruneOnce(ctx, cfg, log)
		if ctx.Err() != nil {
			return
		}
		m.Pruned(sum.Deleted, sum.Cutoff, err)
		if err != nil {
			log.Warn().Err(err).Dur("next_in", cfg.Prune.Interval).Msg("prune failed; trying again at the next interval")
		}
		timer.Reset(cfg.Prune.Interval)
	}
}

// pruneOnce finds the cutoff and deletes the rows before it.
func pruneOnce(ctx context.Context, cfg *config.Config, log zerolog.Logger) (prune.Summary, error) {
	db, err := prune.Open(ctx, cfg.PruneConn())
	if err != nil {
		return prune.Summary{}, err
	}
	defer db.Close()
	load := func(ctx context.Context) (*checkpoint.Checkpoint, error) {
		cp, err := loadPruneCheckpoint(ctx, cfg)
		if errors.Is(err, checkpoint.ErrCheckpointMissing) {
			return nil, fmt.Errorf("prune deletes only rows the router has published, and knows them by its checkpoint: %w; "+
				"run the router first, or give prune the router's --name and --checkpoint-topic", err)
		}
		return cp, err
	}
	covered, err := prune.Covered(ctx, db, load, cfg.Prune.CheckpointWait)
	if err != nil {
		return prune.Summary{}, err
	}
	cutoff := prune.Cutoff(time.Now(), cfg.Prune.OlderThan.D, covered, cfg.Prune.Margin)
	log.Info().Time("cutoff", cutoff).Time("checkpoint_covers", covered).Dur("older_than", cfg.Prune.OlderThan.D).
		Dur("margin", cfg.Prune.Margin).Bool("dry_run", cfg.DryRun).Strs("tables", cfg.OutboxTables).Msg("prune starting")
	sum, err := prune.Run(ctx, db, cfg.PruneConfig(log, cutoff))
	log.Info().Time("cutoff", cutoff).Int64("deleted", sum.Deleted).Int("batches", sum.Batches).
		Float64("rows_per_second", sum.Rate()).Dur("elapsed", sum.Elapsed).Bool("dry_run", sum.DryRun).Msg("prune done")
	return sum, err
}

// loadPruneCheckpoint is kafka.LoadCheckpoint, where a checkpoint topic
// that does not exist holds no checkpoint.
func loadPruneCheckpoint(ctx context.Context, cfg *config.Config) (*checkpoint.Checkpoint, error) {
	adm, err := kafka.NewAdmin(cfg.KafkaOpts()...)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	topics, err := adm.ListTopics(ctx, cfg.CheckpointTopic)
	if err != nil {
		return nil, fmt.Errorf("looking for checkpoint topic %q: %w", cfg.CheckpointTopic, err)
	}
	if !topics.Has(cfg.CheckpointTopic) {
		return nil, fmt.Errorf("%w for %q: checkpoint topic %q does not exist", checkpoint.ErrCheckpointMissing, cfg.Name, cfg.CheckpointTopic)
	}
	return kafka.LoadCheckpoint(ctx, cfg.CheckpointTopic, cfg.Name, cfg.KafkaOpts()...)
}

// pruneSummary is the summary line of a run.
func pruneSummary(s prune.Summary) string {
	cutoff := s.Cutoff.Format(time.RFC3339Nano)
	if s.DryRun {
		return fmt.Sprintf("prune: dry run: %d rows created before %s would be deleted; nothing deleted", s.Deleted, cutoff)
	}
	return fmt.Sprintf("prune: deleted %d rows created before %s in %d batches, %.0f rows/s, %s",
		s.Deleted, cutoff, s.Batches, s.Rate(), s.Elapsed.Round(time.Millisecond))
}

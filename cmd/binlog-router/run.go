package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/metrics"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/relay"
	"github.com/binlog-router/binlog-router/internal/validate"
)

func isPurged(err error) bool {
	return errors.Is(err, binlog.ErrBinlogPurged) || errors.Is(err, checkpoint.ErrRecoveryUnfinished)
}

// parse fills the flags from args, the environment and the config file.
func parse(fs *flag.FlagSet, args []string) error {
	return config.Load(fs, args)
}

func init() { commands["run"] = cmdRun }

func cmdRun(ctx context.Context, args []string) int {
	cfg := config.Default()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	cfg.Register(fs, config.CmdRun)
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	log, err := logging.Stderr(logging.Format(cfg.LogFormat), cfg.LogLevel)
	if err != nil {
		return usageError(err)
	}
	validateCfg := cfg.Validate
	if cfg.Prune.Interval > 0 {
		validateCfg = cfg.ValidatePrune
	}
	if err := validateCfg(); err != nil {
		log.Error().Err(err).Msg("invalid configuration")
		return exitUsage
	}
	for _, w := range cfg.Warnings() {
		log.Warn().Msg(w)
	}
	tuneGC(cfg.MemoryLimit)
	err = runRouter(ctx, &cfg, log)
	code := exitCode(err)
	if code != exitOK {
		log.Error().Err(err).Int("exit_code", code).Msg("binlog-router stopped")
	} else {
		log.Info().Msg("binlog-router stopped")
	}
	return code
}

func runRouter(ctx context.Context, cfg *config.Config, log zerolog.Logger) error {
	if err := cfg.CheckKafkaAuth(ctx); err != nil {
		return err
	}
	m := metrics.New(nil, metrics.Version(version), metrics.IdleCheckpoint(cfg.IdleCheckpoint),
		metrics.TransactionTimeout(cfg.TransactionTimeout))
	sctx, stop := context.WithCancel(ctx)
	var g errgroup.Group
	defer func() {
		stop()
		_ = g.Wait()
	}()
	watchClient, err := kafka.NewClient(cfg.KafkaOpts()...)
	if err != nil {
		return err
	}
	// The partition counts of the topics the router writes to, seen by
	// every session's producer and by the watch's looks every 5 s.
	partitions := kafka.NewPartitionCounts(kafka.PartitionPolicy(cfg.OnPartitionChange), log, m.PartitionChanged)
	watch := metrics.NewReplicaWatch(m, log, metrics.ReplicaWatchConfig{Client: watchClient, Topics: watchedTopics(cfg),
		OnPartitions: partitions.Observe})
	g.Go(func() error { return watch.Run(sctx) })
	if cfg.MetricsAddr != "" {
		srv, err := metrics.Serve(sctx, cfg.MetricsAddr, m, watch.Ready)
		if err != nil {
			return err
		}
		log.Info().Str("metrics_addr", srv.Addr()).Msg("serving /metrics, /healthz, /readyz")
		g.Go(srv.Wait)
	}
	g.Go(func() error { return metrics.NewProgress(m, log, metrics.ProgressConfig{}).Run(sctx) })
	if cfg.Prune.Interval > 0 {
		g.Go(func() error { schedulePrune(sctx, cfg, log, m); return nil })
	}

	guard := &validate.Guard{}
	readerCfg := cfg.ReaderConfig(log, m.Tee(&observer{log: log}))
	readerCfg.Guard = guard
	reader, err := binlog.Open(ctx, readerCfg)
	if err != nil {
		return err
	}
	defer reader.Close()
	tables, err := validate.RequireTables(ctx, reader.DB(), reader.Server().Flavor, cfg.Tables(), cfg.AllowMissingTable, guard)
	if err != nil {
		return err
	}
	for _, t := range tables.Missing {
		log.Warn().Str("table", t.Table.String()).Msg("outbox table does not exist yet (--allow-missing-table): its rows are routed once it is created; the router stops if a table with a name close to it is created or written first")
	}
	m.SetFlavor(string(reader.Server().Flavor))
	rc := cfg.RelayConfig(log, version, m)
	rc.Kafka = append(rc.Kafka, kgo.WithHooks(m.KafkaHooks()...))
	rc.Partitions = partitions
	r, err := relay.New(rc, reader)
	if err != nil {
		return err
	}
	log.Info().Str("version", version).Str("mysql_addr", cfg.MySQLAddr).Strs("kafka_brokers", cfg.KafkaBrokers).
		Strs("outbox_tables", cfg.OutboxTables).Msg("binlog-router starting")
	return r.Run(ctx)
}

// watchedTopics are the topics the replica watch looks at besides the
// outbox topics records were routed to.
func watchedTopics(cfg *config.Config) []string {
	topics := []string{cfg.CheckpointTopic}
	if cfg.OnInvalid == string(pipeline.InvalidDeadLetter) {
		topics = append(topics, cfg.DeadLetterTopic)
	}
	if cfg.Delivery == string(relay.ExactlyOnce) {
		topics = append(topics, "__transaction_state")
	}
	return topics
}

func usageError(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "binlog-router:", err)
	return exitUsage
}

// observer logs what the binlog stream reports.
type observer struct{ log zerolog.Logger }

func (o *observer) OutboxUpdate(table, gtid string, rows int) {
	o.log.Warn().Str("table", table).Str("gtid", gtid).Int("rows", rows).
		Msg("UPDATE of outbox rows ignored: outbox rows are immutable; insert a new event instead (--on-update=fail stops on this)")
}

func (o *observer) DDL(gtid, query string) {
	o.log.Info().Str("gtid", gtid).Str("query", query).Msg("DDL may touch an outbox table; its column layout follows the statement")
}

func (o *observer) Reconnect() {}

// Replayed is logged by the reader, once per run of skipped transactions.
func (o *observer) Replayed(string) {}

// tuneGC trades memory the configuration already bounds for less garbage
// collection: GOGC=400 under a soft memory limit, unless the operator set
// GOGC or GOMEMLIMIT.
func tuneGC(limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" && limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}

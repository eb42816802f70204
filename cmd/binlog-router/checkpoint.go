package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/schema"
)

func init() { commands["checkpoint"] = cmdCheckpoint }

const checkpointUsage = `usage: binlog-router checkpoint show  --name N [--as-debezium-offset] [flags]
       binlog-router checkpoint set   --name N (--gtid SET | --from-debezium-offset JSON) [--force] [flags]
       binlog-router checkpoint reset --name N [--force] [flags]

show   prints the stored checkpoint as JSON; --as-debezium-offset prints
       it as a Debezium MySQL or MariaDB connector offset, for Kafka
       Connect's PATCH /connectors/NAME/offsets (with --outbox-table when
       the checkpoint lies inside a transaction).
set    stores a checkpoint at SET: the router's next start publishes what
       comes after it. SET is checked on the source (--mysql-addr): it must
       parse in the server's flavour, not go beyond the server's executed
       GTID set, and the server must still have the binlog after it.
       --from-debezium-offset takes the position of a Debezium MySQL or
       MariaDB connector offset (the value, its offsets topic record, or
       Kafka Connect's GET /connectors/NAME/offsets); inside a transaction
       it reads that transaction and needs --outbox-table.
reset  deletes the checkpoint (a tombstone): the router's next start
       begins per its --start.

set and reset refuse while a router of that name looks active: its --ha
group has members, its transactional id has a transaction open, its
checkpoint is younger than 2x --idle-checkpoint, or its binlog connection
is open on the source: a replica with its --server-id, or, for a
--mysql-user not allowed to list replicas (MariaDB 10.5+ asks REPLICATION
MASTER ADMIN), any binlog connection of that user. Stop it first.
--force skips the check; a running exactly-once router is then fenced
(its next commit fails and it stops), an at-least-once one would
overwrite the checkpoint.
Every flag of "run" is accepted, with its BINLOG_ROUTER_* variable: give
the command the router's command line or environment, so that --name,
--checkpoint-topic, --server-id and --idle-checkpoint are the router's.
It uses those and the --mysql-* and --kafka-brokers flags.

Flags:
`

func cmdCheckpoint(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, checkpointUsage)
		return exitUsage
	}
	switch args[0] {
	case "show":
		return checkpointShow(ctx, args[1:])
	case "set", "reset":
		return checkpointWrite(ctx, args[0], args[1:])
	case "-h", "--help", "help":
		fmt.Print(checkpointUsage)
		return exitOK
	}
	fmt.Fprintf(os.Stderr, "unknown checkpoint command %q\n\n%s", args[0], checkpointUsage)
	return exitUsage
}

// checkpointCommands are the checkpoint subcommands, for their flags.
var checkpointCommands = map[string]config.Command{
	"show":  config.CmdCheckpointShow,
	"set":   config.CmdCheckpointSet,
	"reset": config.CmdCheckpointReset,
}

func checkpointFlags(cfg *config.Config, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("checkpoint "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), checkpointUsage)
		fs.PrintDefaults()
	}
	cfg.Register(fs, checkpointCommands[name])
	return fs
}

func checkpointShow(ctx context.Context, args []string) int {
	cfg := config.Default()
	fs := checkpointFlags(&cfg, "show")
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	if err := cfg.ValidateConnection(); err != nil {
		return usageError(err)
	}
	if err := cfg.CheckKafkaAuth(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "binlog-router checkpoint show:", err)
		return exitFatal
	}
	cp, err := kafka.LoadCheckpoint(ctx, cfg.CheckpointTopic, cfg.Name, cfg.KafkaOpts()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binlog-router:", err)
		return exitFatal
	}
	if !cfg.Checkpoint.AsDebeziumOffset {
		return printCheckpoint(cp)
	}
	o, err := debeziumOffsetFor(ctx, &cfg, cp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binlog-router checkpoint show:", err)
		return exitFatal
	}
	if err := json.NewEncoder(os.Stdout).Encode(o); err != nil {
		return exitFatal
	}
	return exitOK
}

func printCheckpoint(cp *checkpoint.Checkpoint) int {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(cp); err != nil {
		return exitFatal
	}
	return exitOK
}

// debeziumOffsetFor is checkpoint.DebeziumOffsetFor; only a checkpoint
// inside a transaction needs the source.
func debeziumOffsetFor(ctx context.Context, cfg *config.Config, cp *checkpoint.Checkpoint) (checkpoint.DebeziumOffset, error) {
	if cp.TxnGTID == "" {
		return checkpoint.DebeziumOffsetFor(ctx, nil, cp)
	}
	log, err := logging.Stderr(logging.Format(cfg.LogFormat), cfg.LogLevel)
	if err != nil {
		return checkpoint.DebeziumOffset{}, err
	}
	reader, err := openOutboxReader(ctx, cfg, log)
	if err != nil {
		return checkpoint.DebeziumOffset{}, fmt.Errorf("checkpoint %q lies inside transaction %s: %w", cp.Name, cp.TxnGTID, err)
	}
	defer reader.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return checkpoint.DebeziumOffsetFor(ctx, reader, cp)
}

// openOutboxReader connects to the source, with a throw-away replica id,
// to read transactions of the router's outbox tables: cfg must be the
// router's configuration (run's flags).
func openOutboxReader(ctx context.Context, cfg *config.Config, log zerolog.Logger) (*binlog.Reader, error) {
	if len(cfg.OutboxTables) == 0 {
		return nil, errors.New("reading its outbox rows needs the router's --outbox-table")
	}
	run := *cfg
	if err := run.Validate(); err != nil {
		return nil, fmt.Errorf("the router's configuration: %w", err)
	}
	rc := run.ReaderConfig(log, nil)
	rc.ServerID = randomServerID()
	rc.ReconnectTimeout = 10 * time.Second
	return binlog.Open(ctx, rc)
}

func checkpointWrite(ctx context.Context, verb string, args []string) int {
	cfg := config.Default()
	fs := checkpointFlags(&cfg, verb)
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	text, dbz, err := target(&cfg.Checkpoint, verb)
	if err != nil {
		return usageError(err)
	}
	log, err := logging.Stderr(logging.Format(cfg.LogFormat), cfg.LogLevel)
	if err != nil {
		return usageError(err)
	}
	if err := cfg.ValidateConnection(); err != nil {
		return usageError(err)
	}
	if err := cfg.CheckKafkaAuth(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "binlog-router checkpoint %s: %v\n", verb, err)
		return exitFatal
	}
	if err := writeCheckpoint(ctx, &cfg, verb, text, dbz, cfg.Checkpoint.Force, log); err != nil {
		fmt.Fprintf(os.Stderr, "binlog-router checkpoint %s: %v\n", verb, err)
		if isUsage(err) {
			return exitUsage
		}
		return exitFatal
	}
	return exitOK
}

// target returns the GTID text to store ("" for reset) and, for
// --from-debezium-offset, the offset.
func target(f *config.CheckpointFlags, verb string) (string, *checkpoint.DebeziumOffset, error) {
	if verb == "reset" {
		return "", nil, nil
	}
	switch {
	case f.GTID.Given && f.DebeziumOffset.Given:
		return "", nil, errors.New("give --gtid or --from-debezium-offset, not both")
	case f.GTID.Given:
		return f.GTID.Value, nil, nil
	case f.DebeziumOffset.Given:
		o, err := checkpoint.ParseDebeziumOffset(f.DebeziumOffset.Value)
		return o.GTIDs, &o, err
	}
	return "", nil, errors.New("checkpoint set needs --gtid SET or --from-debezium-offset JSON")
}

// debeziumPosition is checkpoint.DebeziumPosition; only an offset inside a
// transaction needs to read it.
func debeziumPosition(ctx context.Context, cfg *config.Config, flavor gtid.Flavor, o checkpoint.DebeziumOffset, log zerolog.Logger) (checkpoint.Position, error) {
	if !o.InTransaction() {
		return checkpoint.DebeziumPosition(ctx, nil, flavor, o)
	}
	reader, err := openOutboxReader(ctx, cfg, log)
	if err != nil {
		return checkpoint.Position{}, &refusedSetError{fmt.Errorf("the Debezium offset lies inside a transaction (event %d, row %d): %w", o.Event, o.Row, err)}
	}
	defer reader.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	p, err := checkpoint.DebeziumPosition(ctx, reader, flavor, o)
	if err != nil {
		return p, &refusedSetError{err}
	}
	return p, nil
}

func writeCheckpoint(ctx context.Context, cfg *config.Config, verb, text string, dbz *checkpoint.DebeziumOffset, force bool, log zerolog.Logger) error {
	adm, closeAdm, err := adminClient(cfg)
	if err != nil {
		return err
	}
	defer closeAdm()
	old, err := currentCheckpoint(ctx, cfg, adm)
	if err != nil {
		return err
	}
	reader, err := openSource(ctx, cfg, log)
	if err != nil && (verb == "set" || !force) {
		return fmt.Errorf("%w; checkpoint %s needs the source (--mysql-addr) to validate the GTID set and to see whether the router is connected to it", err, verb)
	}
	if reader != nil {
		defer reader.Close()
	}
	rec := checkpoint.Tombstone(cfg.CheckpointTopic, cfg.Name)
	var cp *checkpoint.Checkpoint
	if verb == "set" {
		var txnGTID string
		var txnRows int
		if dbz != nil {
			p, err := debeziumPosition(ctx, cfg, reader.Server().Flavor, *dbz, log)
			if err != nil {
				return err
			}
			text, txnGTID, txnRows = p.Set.String(), p.TxnGTID, p.TxnRows
		}
		if cp, err = newCheckpoint(ctx, cfg, reader, text); err != nil {
			return err
		}
		cp.TxnGTID, cp.TxnRows = txnGTID, txnRows
		if rec, err = cp.Record(cfg.CheckpointTopic); err != nil {
			return err
		}
	}
	if !force {
		if err := refuseIfActive(ctx, cfg, adm, old, reader, log); err != nil {
			return err
		}
	}
	if err := kafka.EnsureCheckpointTopic(ctx, adm, cfg.CheckpointTopic); err != nil {
		return err
	}
	if err := kafka.WriteCheckpoint(ctx, rec, kafka.TransactionalIDs(cfg.Name, cfg.KafkaTransactions), cfg.KafkaOpts()...); err != nil {
		return err
	}
	was := "none"
	if old != nil {
		was = fmt.Sprintf("%q written %s", old.GTIDSet, old.Time.Format(time.RFC3339))
	}
	if cp == nil {
		fmt.Fprintf(os.Stderr, "checkpoint %q deleted (was %s); the router starts per its --start\n", cfg.Name, was)
		return nil
	}
	if cp.TxnGTID != "" {
		fmt.Fprintf(os.Stderr, "checkpoint %q set to %q and %d outbox rows of transaction %s (was %s); the router publishes what comes after them\n", cfg.Name, cp.GTIDSet, cp.TxnRows, cp.TxnGTID, was)
	} else {
		fmt.Fprintf(os.Stderr, "checkpoint %q set to %q (was %s); the router publishes what comes after it\n", cfg.Name, cp.GTIDSet, was)
	}
	printCheckpoint(cp)
	return nil
}

// currentCheckpoint returns the stored checkpoint, nil when there is none
// (or no checkpoint topic yet).
func currentCheckpoint(ctx context.Context, cfg *config.Config, adm *kadm.Client) (*checkpoint.Checkpoint, error) {
	topics, err := adm.ListTopics(ctx, cfg.CheckpointTopic)
	if err != nil {
		return nil, fmt.Errorf("looking up checkpoint topic %q: %w", cfg.CheckpointTopic, err)
	}
	if !topics.Has(cfg.CheckpointTopic) {
		return nil, nil
	}
	cp, err := kafka.LoadCheckpoint(ctx, cfg.CheckpointTopic, cfg.Name, cfg.KafkaOpts()...)
	if errors.Is(err, checkpoint.ErrCheckpointMissing) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading the current checkpoint: %w", err)
	}
	return cp, nil
}

// openSource connects to the source with a throw-away replica id: the
// stream probe must not disconnect a replica or router using the
// configured one.
func openSource(ctx context.Context, cfg *config.Config, log zerolog.Logger) (*binlog.Reader, error) {
	rc := cfg.ReaderConfig(log, nil)
	rc.ServerID = randomServerID()
	// No outbox rows are read; the reader wants a table to watch.
	rc.Tables = []schema.TableName{{Database: "binlog_router", Table: "checkpoint_probe"}}
	rc.Columns = schema.DefaultColumns()
	rc.ReconnectTimeout = 10 * time.Second
	return binlog.Open(ctx, rc)
}

func adminClient(cfg *config.Config) (*kadm.Client, func(), error) {
	adm, err := kafka.NewAdmin(cfg.KafkaOpts()...)
	if err != nil {
		return nil, nil, err
	}
	return adm, adm.Close, nil
}

// refusedSetError marks a GTID set given on the command line that does
// not parse or that the server refuses (beyond its executed set,
// purged): bad usage (exit 2).
type refusedSetError struct{ err error }

func (e *refusedSetError) Error() string { return e.err.Error() }
func (e *refusedSetError) Unwrap() error { return e.err }

// newCheckpoint validates text on the source and returns the checkpoint
// to store.
func newCheckpoint(ctx context.Context, cfg *config.Config, reader *binlog.Reader, text string) (*checkpoint.Checkpoint, error) {
	s := reader.Server()
	set, err := gtid.Parse(s.Flavor, text)
	if err != nil {
		return nil, &refusedSetError{fmt.Errorf("GTID set for a %s server: %w", s.Flavor, err)}
	}
	if err := checkpoint.CheckServable(ctx, reader, set); err != nil {
		if ctx.Err() != nil || !(errors.Is(err, checkpoint.ErrBeyondExecuted) || errors.Is(err, binlog.ErrBinlogPurged)) {
			return nil, fmt.Errorf("checking GTID set %q on the server: %w", set, err)
		}
		return nil, &refusedSetError{fmt.Errorf("refusing to set checkpoint %q to %q: %w", cfg.Name, set, err)}
	}
	return &checkpoint.Checkpoint{
		Name:       cfg.Name,
		GTIDSet:    set.String(),
		Flavor:     string(s.Flavor),
		ServerID:   s.ServerID,
		ServerUUID: s.ServerUUID,
		Time:       time.Now().UTC(),
		Source:     cfg.MySQLAddr,
		Version:    version + checkpoint.OperatorMark,
	}, nil
}

// refuseIfActive returns an error naming every sign that a router called
// cfg.Name is running (see checkpoint.ActiveSigns); any one refuses, as no
// single sign is proof either way, and --force overrides.
func refuseIfActive(ctx context.Context, cfg *config.Config, adm *kadm.Client, old *checkpoint.Checkpoint, reader *binlog.Reader, log zerolog.Logger) error {
	owner := checkpoint.Owner{
		Group:            kafka.GroupID(cfg.Name),
		TransactionalIDs: kafka.TransactionalIDs(cfg.Name, cfg.KafkaTransactions),
		ServerID:         uint32(cfg.ServerID),
		IdleCheckpoint:   cfg.IdleCheckpoint,
	}
	activity, err := kafka.DescribeActivity(ctx, adm, owner.Group, owner.TransactionalIDs...)
	if err != nil {
		return fmt.Errorf("checking whether router %q is running: %w; use --force to skip the check", cfg.Name, err)
	}
	signs, warnings, err := checkpoint.ActiveSigns(ctx, activity, reader.DB(), owner, old)
	if err != nil {
		return fmt.Errorf("checking whether router %q is running: %w; use --force to skip the check", cfg.Name, err)
	}
	for _, w := range warnings {
		log.Warn().Msg(w)
	}
	if len(signs) == 0 {
		return nil
	}
	return fmt.Errorf("router %q looks active: %s; stop every instance of it and try again, or pass --force (a running exactly-once router is fenced by the write and stops at its next commit; an at-least-once router would overwrite the checkpoint)",
		cfg.Name, strings.Join(signs, "; "))
}

package main

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/replay"
)

func init() { commands["replay"] = cmdReplay }

const replayUsage = `usage: binlog-router replay (--from-gtid SET | --from-time T) [--to-gtid SET | --to-time T]
                           [--topic-prefix P] [--topic-template T] [--dry-run] [router flags]

Re-publishes the outbox rows of a binlog range with the keys, values and
headers (id, binlog_gtid, ...) the router gave them, to the topics of
--topic-template, each prefixed with --topic-prefix. It never reads or
writes the router's checkpoint and produces with a transactional id of
its own, committing at binlog transaction boundaries only (at the first
one after --commit-records records, or sooner): read_committed consumers
see whole transactions. Rows are routed as by "run": a record too large
for its topic stops the replay.

  --from-gtid SET  start after the transactions in SET (like a checkpoint;
                   "" = the oldest binlog the server has)
  --from-time T    skip transactions committed before T (RFC3339); reads
                   the binlog from --from-gtid (default the oldest) up to T
  --to-gtid SET    end after the last transaction contained in SET
  --to-time T      end at the first transaction committed after T
                   without either: end at the server's executed GTID set at start
  --dry-run        print one JSON line per record on stdout, produce nothing

Every flag of "run" is accepted, with its BINLOG_ROUTER_* variable, so the
router's command line and environment give the records the router gave
(--mysql-addr, --outbox-table, --preset, --column-*, --topic-template,
--validate-json, --require-uuid, --commit-records, ...). --server-id,
--start, --checkpoint-topic and the other flags of the live pipeline are
ignored: the replay's binlog connection uses --replay-server-id (random by
default), because a server drops one of two connections with the same id.

A summary line goes to stderr. Exit status: 0 done, or stopped by
SIGTERM/SIGINT (the summary says up to where it committed: replay again
from there); 1 error; 2 usage (flags, a GTID set that does not parse or
that the server refuses, a server setting); 3 the range's binlog was
purged.

Flags:
`

func cmdReplay(ctx context.Context, args []string) int {
	cfg := config.Default()
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), replayUsage)
		fs.PrintDefaults()
	}
	cfg.Register(fs, config.CmdReplay)
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	rf := &cfg.Replay
	if !rf.FromGTID.Given && !rf.FromTime.Given {
		return usageError(errors.New("replay needs --from-gtid SET or --from-time T (--from-gtid \"\" starts at the oldest binlog)"))
	}
	// Never the router's id: the server drops one of two binlog
	// connections with the same replica id.
	cfg.ServerID = rf.ServerID
	if cfg.ServerID == 0 {
		cfg.ServerID = uint(randomServerID())
	}
	if rf.TransactionalID == "" {
		rf.TransactionalID = "binlog-router-replay-" + cfg.Name + "-" + randomHex(4)
	}
	log, err := logging.Stderr(logging.Format(cfg.LogFormat), cfg.LogLevel)
	if err != nil {
		return usageError(err)
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(os.Stderr, "binlog-router replay:", err)
		return exitUsage
	}
	sum, err := runReplay(ctx, &cfg, log)
	stopped := err != nil && ctx.Err() != nil
	if stopped {
		// SIGTERM/SIGINT: a clean stop, as for every command.
		sum.Reason = fmt.Sprintf("stopped by a signal before the end of the range; replay again with --from-gtid %q to continue", sum.Committed)
	}
	if sum.Started {
		fmt.Fprintln(os.Stderr, summaryLine(sum, rf.TopicPrefix))
	}
	switch {
	case err == nil, stopped:
		return exitOK
	}
	fmt.Fprintln(os.Stderr, "binlog-router replay:", err)
	return exitCode(err)
}

func runReplay(ctx context.Context, cfg *config.Config, log zerolog.Logger) (replay.Summary, error) {
	rf := &cfg.Replay
	if err := cfg.CheckKafkaAuth(ctx); err != nil {
		return replay.Summary{}, err
	}
	reader, err := binlog.Open(ctx, cfg.ReaderConfig(log, &observer{log: log}))
	if err != nil {
		return replay.Summary{}, err
	}
	defer reader.Close()
	server := reader.Server()
	rc := cfg.ReplayConfig(log, os.Stdout)
	if rf.FromGTID.Given && strings.TrimSpace(rf.FromGTID.Value) != "" {
		if rc.From, err = gtid.Parse(server.Flavor, rf.FromGTID.Value); err != nil {
			return replay.Summary{}, &refusedSetError{fmt.Errorf("--from-gtid: %w", err)}
		}
	} else if rc.From, err = checkpoint.StartAt(ctx, "earliest", reader, log); err != nil {
		// The oldest binlog the server has, as --start earliest.
		return replay.Summary{}, fmt.Errorf("--from-gtid \"\": %w", err)
	}
	if rf.ToGTID.Given {
		if rc.To, err = gtid.Parse(server.Flavor, rf.ToGTID.Value); err != nil {
			return replay.Summary{}, &refusedSetError{fmt.Errorf("--to-gtid: %w", err)}
		}
	}
	log.Info().Str("from", rc.From.String()).Str("transactional_id", rf.TransactionalID).Bool("dry_run", cfg.DryRun).
		Str("topic_prefix", rf.TopicPrefix).Msg("replay starting")
	return replay.Run(ctx, rc, reader)
}

func summaryLine(s replay.Summary, prefix string) string {
	line := fmt.Sprintf("replay: %d records, %d transactions in range (%d skipped), from after %q to %q",
		s.Records, s.Transactions, s.Skipped, s.From, s.To)
	if prefix != "" {
		line += fmt.Sprintf(", topic prefix %q", prefix)
	}
	if s.Reason != "" {
		line += "; ended: " + s.Reason
	} else {
		line += fmt.Sprintf("; failed, committed through %q", s.Committed)
	}
	if s.DryRun {
		line += " (dry run: nothing produced)"
	}
	return line
}

// randomServerID returns a replica id in [2^31, 2^32-1): far from the
// small ids people give servers and routers.
func randomServerID() uint32 { return 1<<31 + rand.Uint32N(1<<31-1) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b) // never fails (crypto/rand.Read panics rather than return an error)
	return hex.EncodeToString(b)
}

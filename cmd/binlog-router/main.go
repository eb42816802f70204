package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/validate"
)

// Exit codes, one per cause (docs/exit-codes.md).
const (
	exitOK     = 0 // stopped cleanly, or the command did what it was asked
	exitFatal  = 1 // any other error: connection, Kafka, a row the router must stop before, ...
	exitUsage  = 2 // bad usage or configuration: flags, --start, outbox tables, a refused GTID set, server settings
	exitPurged = 3 // the binlog the checkpoint needs was purged, or a recover is unfinished: run recover
	// exitShutdownTimeout: a stop did not commit within --shutdown-timeout
	// and aborted the open Kafka transaction.
	exitShutdownTimeout = 4
	// exitPartitions: a topic's partition count changed with
	// --on-partition-change=fail
	// and stopped before a record placed by the new count.
	exitPartitions = 5
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `binlog-router routes outbox rows from the MySQL/MariaDB binlog to Kafka.

Usage:
  binlog-router run [flags]              route until SIGTERM/SIGINT
  binlog-router validate [flags]         check server, outbox tables, Kafka and checkpoint
  binlog-router replay --from-gtid SET [--to-gtid SET | --to-time T] [--topic-prefix P] [--dry-run] [flags]
                                         re-publish a binlog range
  binlog-router checkpoint show|set|reset [flags]
                                         print, move or delete the stored checkpoint
  binlog-router prune --older-than AGE --prune-mysql-user U [--dry-run] [flags]
                                         delete published outbox rows older than AGE
  binlog-router recover (--since T | --since-checkpoint | --where COND) [--dry-run] [flags]
                                         publish outbox rows the binlog no longer has, from the table
  binlog-router schema [--flavor mysql|mariadb] [--preset default|debezium] [--table db.outbox]
  binlog-router version

Every flag --some-flag can also be set with env BINLOG_ROUTER_SOME_FLAG.
Run "binlog-router <command> -h" for the flags of a command.
`

func main() {
	// The first SIGTERM or SIGINT cancels ctx: a clean stop. The handling
	// is never undone, so that a later signal, while the command finishes
	// or exits, cannot end the process by the signal's default action
	// instead of with its exit code. A signal that arrives before this
	// line (while the program loads, a few milliseconds) ends it as it
	// ends any program that handles none.
	ctx, _ := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return exitUsage
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(ctx, args[1:])
	}
	switch args[0] {
	case "version", "--version", "-version":
		fmt.Println("binlog-router", version)
		return exitOK
	case "help", "-h", "--help":
		fmt.Print(usage)
		return exitOK
	}
	fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

// commands maps a subcommand name to its entry point; each subcommand's
// file registers itself in init.
var commands = map[string]func(ctx context.Context, args []string) int{}

// exitCode maps a fatal error to the process exit code.
func exitCode(err error) int {
	switch {
	case errors.Is(err, pipeline.ErrShutdownTimeout):
		return exitShutdownTimeout
	case err == nil, errors.Is(err, context.Canceled):
		return exitOK
	case isUsage(err):
		return exitUsage
	case isPurged(err):
		return exitPurged
	case errors.Is(err, kafka.ErrPartitionCountChanged):
		return exitPartitions
	}
	return exitFatal
}

// isUsage reports whether err is a configuration mistake found on the
// server: a --start the server cannot serve, an outbox table that does
// not exist, a GTID set given to a command that the server refuses, or a
// server setting the router requires (binlog off, binlog_format not ROW,
// binlog_row_image not FULL, GTIDs off; found at start, or per event when
// it changed at runtime), or a server that ignores the GTID position it
// is asked to stream from (binlog.PositionIgnoredError).
func isUsage(err error) bool {
	var refused *refusedSetError
	return errors.Is(err, checkpoint.ErrInvalidStart) || errors.Is(err, validate.ErrMissingTable) ||
		errors.As(err, &refused) || errors.Is(err, binlog.ErrServerConfig)
}

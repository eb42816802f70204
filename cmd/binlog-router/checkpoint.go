package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/config"
)

func init() { commands["checkpoint"] = cmdCheckpoint }

func cmdCheckpoint(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "show" {
		fmt.Fprintln(os.Stderr, "usage: binlog-router checkpoint show --name N [--kafka-brokers ...] [--checkpoint-topic T]")
		return exitUsage
	}
	cfg := config.Default()
	fs := flag.NewFlagSet("checkpoint show", flag.ContinueOnError)
	cfg.RegisterConnection(fs)
	if err := parse(fs, args[1:]); err != nil {
		return usageError(err)
	}
	cp, err := checkpoint.Load(ctx, cfg.CheckpointTopic, cfg.Name, cfg.KafkaOpts()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binlog-router:", err)
		return exitFatal
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(cp); err != nil {
		return exitFatal
	}
	return exitOK
}

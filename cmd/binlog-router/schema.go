package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/schema"
)

func init() {
	commands["schema"] = func(_ context.Context, args []string) int { return cmdSchema(args) }
}

func cmdSchema(args []string) int {
	cfg := config.Default()
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	cfg.Register(fs, config.CmdSchema)
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	p, err := schema.PresetByName(cfg.Preset)
	if err != nil {
		return usageError(err)
	}
	ddl, err := schema.DDL(cfg.Schema.Flavor, cfg.Schema.Table, p.Columns)
	if err != nil {
		return usageError(err)
	}
	fmt.Println(ddl)
	return exitOK
}

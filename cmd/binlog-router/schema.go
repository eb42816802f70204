package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/binlog-router/binlog-router/internal/schema"
)

func init() {
	commands["schema"] = func(_ context.Context, args []string) int { return cmdSchema(args) }
}

func cmdSchema(args []string) int {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	flavor := fs.String("flavor", "mysql", "mysql or mariadb")
	preset := fs.String("preset", "default", "default or debezium")
	table := fs.String("table", "outbox", "table name, optionally db.table")
	if err := parse(fs, args); err != nil {
		return usageError(err)
	}
	p, err := schema.PresetByName(*preset)
	if err != nil {
		return usageError(err)
	}
	ddl, err := schema.DDL(*flavor, *table, p.Columns)
	if err != nil {
		return usageError(err)
	}
	fmt.Println(ddl)
	return exitOK
}

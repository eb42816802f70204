// Command bench measures binlog-router on this machine: the raw limits of
// go-mysql decoding and franz-go producing on one backlog, the router
// binary catching that backlog up in both delivery modes, end-to-end
// latency under open-loop inserts, and memory under large rows and one
// huge transaction. It prints one table to stdout, writes the same as JSON
// to bench-results/, and logs progress to stderr. See BENCHMARKS.md.
//
//	go run ./test/bench [-quick] [flags]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	o := defaultOptions()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	o.register(fs)
	var table string
	fs.StringVar(&table, "table", "", "print the table of a results JSON file and exit (no measuring)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if table != "" {
		return printSaved(table)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.applyQuick(set)
	if err := o.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.TimeOnly}).With().Timestamp().Logger()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := bench(ctx, &o, log)
	if err != nil {
		res.Error = err.Error()
		log.Error().Err(err).Msg("benchmark stopped")
	}
	if perr := res.printTable(os.Stdout); perr != nil {
		log.Error().Err(perr).Msg("printing the table")
	}
	path, werr := res.writeJSON(o.OutDir)
	if werr != nil {
		log.Error().Err(werr).Msg("writing results")
		return 1
	}
	log.Info().Str("file", path).Msg("results written")
	if err != nil {
		return 1
	}
	return 0
}

// printSaved prints the table of a saved results file.
func printSaved(path string) int {
	r, err := readResults(path)
	if err == nil {
		err = r.printTable(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

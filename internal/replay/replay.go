package replay

import (
	"context"
	"fmt"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
)

// Summary says what a replay did.
type Summary struct {
	Started      bool   // the range was resolved and checked; the fields below are meaningful
	From         string // the start position (exclusive)
	To           string // the GTID set the range ends at (inclusive)
	Records      int    // records produced (or printed) and committed
	Transactions int    // binlog transactions in the range, with or without outbox rows
	Skipped      int    // binlog transactions read past and not replayed
	// Committed is the GTID set up to which every replayed record is
	// committed: after an error, replay again from here.
	Committed string
	Reason    string // why the replay ended; "" after an error
	DryRun    bool
}

// Run replays the range of cfg from reader's server (see the package
// documentation). It returns when the range is over, with everything
// committed, or with the first error, after aborting the open Kafka
// transaction; the Summary is valid in both cases.
func Run(ctx context.Context, cfg Config, reader *binlog.Reader) (Summary, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return Summary{}, err
	}
	server := reader.Server()
	b, err := newBounds(cfg.From, cfg.To, cfg.FromTime, cfg.ToTime, server.Executed)
	if err != nil {
		return Summary{}, err
	}
	sum := Summary{Started: true, From: cfg.From.String(), To: b.to.String(), Committed: cfg.From.String(), DryRun: cfg.DryRun}
	if b.over() {
		sum.Reason = string(b.reason()) + " (nothing after --from-gtid)"
		return sum, nil
	}
	var out pipeline.Sink
	if cfg.DryRun {
		out, err = newPrinter(&cfg, cfg.Out)
	} else {
		out, err = openShadow(ctx, &cfg)
	}
	if err != nil {
		return sum, err
	}
	err = pass(ctx, &cfg, reader, out, b, &sum)
	if err == nil {
		sum.Reason = string(b.reason())
		return sum, nil
	}
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return sum, fmt.Errorf("replay stopped after committing up to %q (replay from there to continue): %w", sum.Committed, err)
}

// pass runs the live router's loop over the range of b, reading from source
// and producing into out (open), and keeps sum up to date.
func pass(ctx context.Context, cfg *Config, source pipeline.Source, out pipeline.Sink, b *bounds, sum *Summary) error {
	spec := pipeline.PassSpec{TopicPrefix: cfg.TopicPrefix, RowErrorHint: rowErrorHint, DryRun: cfg.DryRun}
	return pipeline.RunPass(ctx, cfg.loopConfig(), spec, source, cfg.From, out, &rangePass{bounds: b, sum: sum})
}

// rowErrorHint is the fix named when a row cannot be routed.
const rowErrorHint = "replay stops at a row it cannot route: give it the router's settings (--validate-json, --require-uuid, --topic-template, --contracts-dir), or send such rows to the dead-letter topic with --on-invalid=dead-letter"

// openShadow opens the sink of a real replay: a Kafka session with the
// replay's own transactional id that writes no checkpoint. Opening it
// fences a previous producer with the same id and aborts its open
// transaction; the ids of replays are their own, so no router is
// affected.
func openShadow(ctx context.Context, cfg *Config) (pipeline.Sink, error) {
	s, err := kafka.OpenShadow(ctx, kafka.Config{
		Kafka:              cfg.Kafka,
		TransactionTimeout: cfg.TransactionTimeout,
		MaxBufferedRecords: cfg.MaxBufferedRecords,
		MaxBufferedBytes:   cfg.MaxBufferedBytes,
		MaxMessageBytes:    cfg.MaxMessageBytes,
		AutoCreateTopics:   cfg.AutoCreateTopics,
		Logger:             cfg.Logger,
		Log:                cfg.Logger,
	}, cfg.TransactionalID)
	if err != nil {
		return nil, err // not a nil *Session in the interface
	}
	return s, nil
}

// rangePass is the replay's pipeline.Pass: the bounds of the range, and the
// Summary of what is committed.
type rangePass struct {
	bounds  *bounds
	sum     *Summary
	verdict verdict // of the transaction entered last
	txns    int     // transactions of the range left since the last commit
}

func (p *rangePass) Enter(t *binlog.Txn) (pipeline.Verdict, error) {
	v, err := p.bounds.enter(t.GTID, t.Time)
	if err != nil {
		return pipeline.Skip, err
	}
	p.verdict = v
	switch v {
	case include:
		return pipeline.Include, nil
	case stop:
		return pipeline.EndBefore, nil
	}
	return pipeline.Skip, nil
}

func (p *rangePass) Leave(t *binlog.Txn) (bool, error) {
	if p.verdict == include {
		p.txns++
	} else {
		p.sum.Skipped++
	}
	return p.bounds.leave(t.GTID)
}

// Committed moves Summary.Committed to the binlog transaction boundary
// the commit was made at.
func (p *rangePass) Committed(records int) {
	p.sum.Records += records
	p.sum.Transactions += p.txns
	p.sum.Committed = p.bounds.pos.String()
	p.txns = 0
}

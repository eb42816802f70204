package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/rs/zerolog"
)

// bench runs the selected stages and returns what was measured, also when
// a stage fails (with the error).
func bench(ctx context.Context, o *options, log zerolog.Logger) (*results, error) {
	res := &results{Time: time.Now(), Quick: o.Quick, Options: *o}
	e, err := setup(ctx, o, log)
	if err != nil {
		return res, err
	}
	defer e.Close()
	res.Machine = describeMachine(ctx, e, o)
	err = runStages(ctx, e, o, res)
	res.evaluate()
	return res, err
}

func runStages(ctx context.Context, e *env, o *options, res *results) error {
	spec := backlogSpec{
		Rows: o.Events, RowsPerTxn: o.RowsPerTxn, OtherPct: o.OtherTxnPct, Loaders: o.Loaders,
		TxnsPerExec: o.TxnsPerExec, PayloadBytes: o.PayloadBytes, Jitter: 0.1, Aggregates: o.Aggregates, Seed: o.Seed,
	}
	var bl backlog
	if o.Stages.needsBacklog() || o.ProfileDir != "" {
		e.log.Info().Int("rows", spec.Rows).Int("rows_per_txn", spec.RowsPerTxn).Float64("other_txn_pct", spec.OtherPct).
			Int("loaders", spec.Loaders).Msg("loading the backlog")
		var err error
		if bl, err = loadBacklog(ctx, e.db, spec); err != nil {
			return fmt.Errorf("loading the backlog: %w", err)
		}
		res.Backlog = newBacklogReport(bl)
		e.log.Info().Float64("seconds", bl.Elapsed.Seconds()).Int("other_txns", bl.OtherTxns).
			Str("start", bl.Start.String()).Str("end", bl.End.String()).Msg("backlog loaded")
	}
	if o.Stages.has(stageRaw) {
		if err := runRaw(ctx, e, o, spec, bl, res); err != nil {
			return err
		}
	}
	if o.Stages.has(stageCatchup) {
		for _, delivery := range []string{"exactly-once", "at-least-once"} {
			r := routerRun{Name: e.unique("catchup"), Prefix: e.unique("bench-catchup"), Delivery: delivery, Start: bl.Start}
			c, err := runCatchup(ctx, e, o, "router "+delivery, r, bl)
			if err != nil {
				return err
			}
			if delivery == "exactly-once" {
				res.ExactlyOnce = &c
			} else {
				res.AtLeastOnce = &c
			}
		}
	}
	if o.ProfileDir != "" {
		if err := profileRouter(ctx, e, o, bl); err != nil {
			return err
		}
	}
	if o.Stages.has(stageLive) {
		live, err := runLive(ctx, e, o)
		if err != nil {
			return err
		}
		res.Live = &live
	}
	if o.Stages.has(stageStress) {
		s, err := runStress(ctx, e, o)
		res.Stress = s
		if err != nil {
			return err
		}
	}
	return nil
}

// runRaw measures the raw limits on the backlog: go-mysql decoding it,
// and franz-go producing records of the same shape.
func runRaw(ctx context.Context, e *env, o *options, spec backlogSpec, bl backlog, res *results) error {
	e.log.Info().Msg("raw decode")
	stop, err := startCPUProfile(o.ProfileDir, "raw-decode")
	if err != nil {
		return err
	}
	e.settle(ctx, time.Minute)
	meter := newCPUMeter(e.serverPids())
	d, err := rawDecode(ctx, e.maria.Addr(), uint32(e.serverID()), bl)
	d.OtherCPU = meter.used()
	if perr := stop(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	res.RawDecode = &d
	e.log.Info().Float64("rows_per_s", d.RowsPerSec).Interface("server_cpu_s", d.OtherCPU).Msg("raw decode done")

	for _, transactional := range []bool{false, true} {
		prefix, txnID, name := e.unique("bench-raw-idem"), "", "raw-produce-idempotent"
		if transactional {
			prefix, txnID, name = e.unique("bench-raw-txn"), e.unique("bench-raw-txn"), "raw-produce-transactional"
		}
		topics := topicsFor(prefix)
		if err := e.admin.createTopics(ctx, o.Partitions, topics...); err != nil {
			return err
		}
		recs, bytes := buildRecords(spec, prefix, bl.Rows)
		runtime.GC()
		e.log.Info().Bool("transactional", transactional).Int("records", len(recs)).Msg("raw produce")
		stop, err := startCPUProfile(o.ProfileDir, name)
		if err != nil {
			return err
		}
		p, err := rawProduce(ctx, e.kafka.Brokers, recs, bytes, txnID, o.CommitEvery)
		if perr := stop(); err == nil {
			err = perr
		}
		if derr := e.admin.deleteTopics(ctx, topics...); derr != nil {
			e.log.Warn().Err(derr).Msg("dropping raw produce topics")
		}
		if err != nil {
			return err
		}
		e.log.Info().Str("mode", p.Mode).Float64("records_per_s", p.RecordsPerSec).Msg("raw produce done")
		if transactional {
			res.RawTransactional = &p
		} else {
			res.RawIdempotent = &p
		}
	}
	runtime.GC()
	return nil
}

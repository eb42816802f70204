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

// runStages runs the selected stages. A stage that fails is recorded in
// res.Errors and the next stage still runs; only a failed backlog load
// stops the stages that need it.
func runStages(ctx context.Context, e *env, o *options, res *results) error {
	failed := func(stage string, err error) {
		e.log.Error().Err(err).Str("stage", stage).Msg("stage failed")
		res.Errors = append(res.Errors, stage+": "+err.Error())
	}
	spec := backlogSpec{
		Rows: o.Events, RowsPerTxn: o.RowsPerTxn, OtherPct: o.OtherTxnPct, Loaders: o.Loaders,
		TxnsPerExec: o.TxnsPerExec, PayloadBytes: o.PayloadBytes, Jitter: 0.1, Aggregates: o.Aggregates, Seed: o.Seed,
	}
	var bl backlog
	haveBacklog := false
	if o.Stages.needsBacklog() || o.ProfileDir != "" {
		e.log.Info().Int("rows", spec.Rows).Int("rows_per_txn", spec.RowsPerTxn).Float64("other_txn_pct", spec.OtherPct).
			Int("loaders", spec.Loaders).Msg("loading the backlog")
		var err error
		if bl, err = loadBacklog(ctx, e.db, spec); err != nil {
			failed("backlog", err)
		} else {
			haveBacklog = true
			res.Backlog = newBacklogReport(bl)
			e.log.Info().Float64("seconds", bl.Elapsed.Seconds()).Int("other_txns", bl.OtherTxns).
				Str("start", bl.Start.String()).Str("end", bl.End.String()).Msg("backlog loaded")
		}
	}
	// A fresh Apache Kafka node is slow until its JIT has compiled the
	// produce paths; the first raw limit would pay for that.
	if haveBacklog && o.Kafka == kafkaApache && (o.Stages.has(stageRaw) || o.Stages.has(stageCatchup)) {
		if err := warmNode(ctx, e, o, spec); err != nil {
			failed("warm-up", err)
		}
	}
	// Raw limits and router catch-ups alternate, run after run, so that
	// each repetition meets the machine in about the same state.
	for run := 1; run <= o.Runs && haveBacklog; run++ {
		if o.Stages.has(stageRaw) && ctx.Err() == nil {
			if err := runRaw(ctx, e, o, spec, bl, res); err != nil {
				failed(stageRaw, err)
			}
		}
		if !o.Stages.has(stageCatchup) {
			continue
		}
		for _, delivery := range []string{"exactly-once", "at-least-once"} {
			if ctx.Err() != nil {
				break
			}
			r := routerRun{Name: e.unique("catchup"), Prefix: e.unique("bench-catchup"), Delivery: delivery, Start: bl.Start}
			c, err := runCatchup(ctx, e, o, "router "+delivery, r, bl)
			if err != nil {
				failed(stageCatchup, err)
				continue
			}
			if delivery == "exactly-once" {
				res.ExactlyOnceRuns = append(res.ExactlyOnceRuns, c)
			} else {
				res.AtLeastOnceRuns = append(res.AtLeastOnceRuns, c)
			}
		}
	}
	res.pickBest()
	if o.Stages.has(stageDebezium) && haveBacklog && ctx.Err() == nil {
		// Before the live stage: the catch-ups end where the backlog ends.
		d, err := runDebezium(ctx, e, o, spec, bl)
		res.Debezium = d
		if err != nil {
			failed(stageDebezium, err)
		}
	}
	if o.ProfileDir != "" && haveBacklog && ctx.Err() == nil {
		if err := profileRouter(ctx, e, o, bl); err != nil {
			failed("profile", err)
		}
	}
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		if !o.Stages.has(stageLive) || ctx.Err() != nil {
			break
		}
		live, err := runLive(ctx, e, o, delivery)
		if err != nil {
			failed(stageLive, err)
			continue
		}
		if delivery == "exactly-once" {
			res.Live = &live
		} else {
			res.LiveAtLeastOnce = &live
		}
	}
	if o.Stages.has(stageBroker) && ctx.Err() == nil {
		b, err := runBrokerLive(ctx, e, o)
		res.Broker = b
		if err != nil {
			failed(stageBroker, err)
		}
	}
	if o.Stages.has(stageStress) && ctx.Err() == nil {
		s, err := runStress(ctx, e, o)
		res.Stress = s
		if err != nil {
			failed(stageStress, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted: %w", err)
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("%d stage(s) failed", len(res.Errors))
	}
	return nil
}

// runRaw measures the raw limits on the backlog: go-mysql reading it
// without parsing, go-mysql decoding it, and franz-go producing records of
// the same shape.
func runRaw(ctx context.Context, e *env, o *options, spec backlogSpec, bl backlog, res *results) error {
	e.log.Info().Msg("raw read")
	e.settle(ctx, o.Settle)
	readMeter := newCPUMeter(e.serverPids())
	rd, err := rawRead(ctx, e.maria.Addr(), uint32(e.serverID()), bl)
	rd.CPU = readMeter.used(0)
	if err != nil {
		return err
	}
	res.RawReadRuns = append(res.RawReadRuns, rd)
	e.log.Info().Float64("rows_per_s", rd.RowsPerSec).Float64("mb_per_s", rd.MBPerSec).Float64("others_cores", rd.CPU.ForeignC).Msg("raw read done")

	e.log.Info().Msg("raw decode")
	stop, err := startCPUProfile(o.ProfileDir, "raw-decode")
	if err != nil {
		return err
	}
	e.settle(ctx, o.Settle)
	meter := newCPUMeter(e.serverPids())
	d, err := rawDecode(ctx, e.maria.Addr(), uint32(e.serverID()), bl)
	d.CPU = meter.used(0)
	if perr := stop(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	res.RawDecodeRuns = append(res.RawDecodeRuns, d)
	e.log.Info().Float64("rows_per_s", d.RowsPerSec).Float64("others_cores", d.CPU.ForeignC).Msg("raw decode done")

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
		e.settle(ctx, o.Settle)
		meter := newCPUMeter(e.serverPids())
		p, err := rawProduce(ctx, e.kafka.Brokers, recs, bytes, txnID, o.CommitEvery)
		p.CPU = meter.used(0)
		if perr := stop(); err == nil {
			err = perr
		}
		if derr := e.admin.deleteTopics(ctx, topics...); derr != nil {
			e.log.Warn().Err(derr).Msg("dropping raw produce topics")
		}
		if err != nil {
			return err
		}
		e.log.Info().Str("mode", p.Mode).Float64("records_per_s", p.RecordsPerSec).Float64("others_cores", p.CPU.ForeignC).Msg("raw produce done")
		if transactional {
			res.RawTransactionalRuns = append(res.RawTransactionalRuns, p)
		} else {
			res.RawIdempotentRuns = append(res.RawIdempotentRuns, p)
		}
	}
	runtime.GC()
	return nil
}

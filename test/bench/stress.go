package main

import (
	"context"
	"fmt"
	"strconv"
)

// routerMaxMessageBytes is --max-message-bytes for the large-payload run:
// room for one record of BigPayload bytes plus its headers and framing.
func routerMaxMessageBytes(o *options) int { return max(1<<20, 2*o.BigPayload) }

// runStress measures the router's memory on the two shapes that break
// unbounded buffers: a backlog of very large rows, and one transaction with
// very many rows.
func runStress(ctx context.Context, e *env, o *options) ([]catchupResult, error) {
	var out []catchupResult

	e.log.Info().Int("rows", o.BigRows).Int("payload_bytes", o.BigPayload).Msg("stress: loading the large-payload backlog")
	big, err := loadBacklog(ctx, e.db, backlogSpec{
		Rows: o.BigRows, RowsPerTxn: 1, Loaders: 2, TxnsPerExec: 1,
		PayloadBytes: o.BigPayload, Aggregates: o.Aggregates, Seed: o.Seed, Stream: 2000,
	})
	if err != nil {
		return out, fmt.Errorf("stress: loading large payloads: %w", err)
	}
	r := routerRun{Name: e.unique("bigrows"), Prefix: e.unique("bench-bigrows"), Delivery: "exactly-once", Start: big.Start,
		Extra: []string{"--max-message-bytes", strconv.Itoa(routerMaxMessageBytes(o))}}
	res, err := runCatchup(ctx, e, o, fmt.Sprintf("%d rows of %s payloads", o.BigRows, byteSize(int64(o.BigPayload))), r, big)
	if err != nil {
		return out, err
	}
	out = append(out, res)

	e.log.Info().Int("rows", o.BigTxnRows).Msg("stress: loading one large transaction")
	gen := newEventGen(o.Seed, 3000, o.Aggregates, o.PayloadBytes, 0.1)
	txn, err := loadOneTransaction(ctx, e.db, o.BigTxnRows, 500, gen)
	if err != nil {
		return out, fmt.Errorf("stress: loading one large transaction: %w", err)
	}
	r = routerRun{Name: e.unique("bigtxn"), Prefix: e.unique("bench-bigtxn"), Delivery: "exactly-once", Start: txn.Start}
	res, err = runCatchup(ctx, e, o, fmt.Sprintf("one transaction of %d rows", o.BigTxnRows), r, txn)
	if err != nil {
		return out, err
	}
	return append(out, res), nil
}

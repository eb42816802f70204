package main

import (
	"context"
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// rawReadResult is go-mysql reading the backlog in raw mode: the dump
// connection and the event framing alone, no event parsed.
type rawReadResult struct {
	Rows       int     `json:"rows"` // the backlog's outbox rows, in the transactions read
	Txns       int     `json:"transactions"`
	Events     int     `json:"events"`
	Bytes      int64   `json:"bytes"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_second"`
	MBPerSec   float64 `json:"mb_per_second"`
	CPU        cpuUse  `json:"cpu_during_run"`
}

// rawRead streams the backlog with rawDump (go-mysql's raw mode:
// headers and checksums only) until it has seen the commit of every
// backlog transaction. It is the physical limit of the source side, to
// hold the parsed decode (rawDecode) and the router against.
func rawRead(ctx context.Context, addr string, serverID uint32, bl backlog) (rawReadResult, error) {
	res := rawReadResult{Rows: bl.Rows}
	want := bl.OutboxTxns + bl.OtherTxns
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	began := time.Now()
	err := rawDump(ctx, rawDumpConfig{Addr: addr, User: "root", ServerID: serverID,
		Flavor: gtid.MariaDB, Start: bl.Start.String()}, func(ev rawEvent) bool {
		res.Events++
		res.Bytes += int64(ev.Size)
		if ev.IsXID() {
			res.Txns++
		}
		return res.Txns < want
	})
	elapsed := time.Since(began)
	if err != nil {
		return res, fmt.Errorf("raw read: after %d of %d transactions: %w", res.Txns, want, err)
	}
	res.Seconds = elapsed.Seconds()
	res.RowsPerSec = float64(res.Rows) / res.Seconds
	res.MBPerSec = float64(res.Bytes) / 1e6 / res.Seconds
	return res, nil
}

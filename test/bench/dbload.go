package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// dbLoad is the database's share of the live stage's work, run beside a
// measurement that involves no database: the open-loop inserts at the
// stage's rate (rows nobody publishes) and a dump connection reading their
// binlog in raw mode, as the router's connection would.
type dbLoad struct {
	cancel   context.CancelFunc
	inserts  chan openLoopResult // the generator's result, once
	dumpDone chan error          // the reader's end
	once     sync.Once
	err      error
}

// startDBLoad starts the inserts at rate for o.LiveDuration, on
// o.LiveConns warm connections, and the binlog reader from the current
// position. Stop ends it.
func startDBLoad(ctx context.Context, e *env, o *options, rate int) (*dbLoad, error) {
	if err := warmPool(ctx, e.db, o.LiveConns); err != nil {
		return nil, err
	}
	pos, err := binlogPos(ctx, e.db)
	if err != nil {
		return nil, err
	}
	gen := newEventGen(o.Seed, uint64(4000+e.serverID()), o.Aggregates, o.PayloadBytes, 0.1)
	serverID := uint32(e.serverID())
	ctx, cancel := context.WithCancel(ctx)
	l := &dbLoad{cancel: cancel, inserts: make(chan openLoopResult, 1), dumpDone: make(chan error, 1)}
	go func() { l.inserts <- openLoop(ctx, e.db, rate, o.LiveDuration, o.LiveConns, gen) }()
	go func() {
		l.dumpDone <- rawDump(ctx, rawDumpConfig{Addr: e.maria.Addr(), User: "root", ServerID: serverID,
			Flavor: gtid.MariaDB, Start: pos.String()}, func(rawEvent) bool { return true })
	}()
	return l, nil
}

// Stop waits for the inserts to end, then stops the binlog reader. It
// returns an error if an insert failed or the reader stopped before it
// was told to (inserts that missed the window because the machine was
// full are the load's, as in the live stage, not an error). It may be called again and returns the same.
func (l *dbLoad) Stop() error {
	l.once.Do(func() {
		res := <-l.inserts
		failed := 0
		for _, s := range res.Samples {
			if s.Err != nil {
				failed++
			}
		}
		select {
		case err := <-l.dumpDone:
			l.err = fmt.Errorf("database load: the binlog reader stopped early: %w", err)
		default:
		}
		l.cancel()
		if l.err == nil {
			<-l.dumpDone
		}
		if l.err == nil && failed > 0 {
			l.err = fmt.Errorf("database load: %d of %d inserts failed", failed, res.Scheduled)
		}
	})
	return l.err
}

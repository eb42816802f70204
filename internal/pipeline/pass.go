package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// Verdict is a Pass's decision on one binlog transaction.
type Verdict int

const (
	Skip      Verdict = iota // read past it: route none of its rows
	Include                  // route its rows
	EndBefore                // the pass ends before it: commit what came before and return
)

// Pass is a run of the loop that is not the live router: a replay. It
// writes no checkpoint, never commits inside a binlog transaction, has no
// graceful stop (the end of its context aborts the open Kafka
// transaction), and routes the transactions it includes exactly as the
// live router does (per-topic batch limits, dead letters). The loop calls its
// methods from one goroutine, in binlog order.
type Pass interface {
	// Enter is called once for each binlog transaction, before its
	// rows (for one without rows, just before Leave). A transaction read
	// again after a reconnect (same GTID) is not entered again.
	Enter(t *binlog.Txn) (Verdict, error)
	// Leave is called when a transaction that Enter included or skipped
	// has ended; every row of it that was included has been produced.
	// over ends the pass after it: the loop commits and returns nil. An
	// error ends the pass as a failure.
	Leave(t *binlog.Txn) (over bool, err error)
	// Committed is called after each commit, which made records records
	// visible: every transaction left before it is committed, and no row
	// of one not left yet.
	Committed(records int)
}

// PassSpec is what a pass changes in the routing of a row.
type PassSpec struct {
	// TopicPrefix is prepended to every routed record's topic (not to the
	// dead-letter topic); a topic that is then invalid stops the pass.
	TopicPrefix string
	// RowErrorHint is the fix named when a row cannot be routed and
	// Config.OnInvalid is InvalidFail; "" names the live router's.
	RowErrorHint string
	// DryRun: the sink produces nothing to Kafka (it prints), so a binlog
	// transaction longer than the Kafka timeout is no stall.
	DryRun bool
}

// RunPass runs the loop as pass p: it reads source after from, routes the
// rows of the transactions p includes by cfg (zero values take the
// defaults) and spec, and produces them into out, which the caller has
// opened and whose Commit must write no checkpoint
// (kafka.SessionConfig.NoCheckpoint, or a dry run's sink). It returns nil
// once p ended the pass and everything before its end is committed and
// acknowledged; otherwise the first error, after aborting the open Kafka
// transaction: the source's own when it stopped, ctx's when ctx ended. It
// closes out.
func RunPass(ctx context.Context, cfg Config, spec PassSpec, source Source, from *gtid.Set, out Sink, p Pass) error {
	defer func() {
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = out.Close(done) // the loop waited in finish; nothing is waited for here
	}()
	l, err := newLoop(cfg, source, cfg.Logger)
	if err != nil {
		return err
	}
	l.out, l.pass, l.passSpec = out, p, spec
	l.at.committed, l.at.pending = from.Clone(), from.Clone()
	l.cur.last = time.Now()

	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	q := binlog.NewQueue(l.cfg.QueueRows, l.cfg.QueueBytes)
	readErr := make(chan error, 1)
	go func() { readErr <- source.RunResume(readCtx, from, binlog.Resume{}, q) }()
	err = l.run(ctx, q)
	stopReading()
	rerr := <-readErr
	if errors.Is(err, binlog.ErrReaderStopped) && rerr != nil {
		err = rerr
	}
	return err
}

package pipeline

import (
	"context"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Source is the binlog side of the loop: where whole committed
// transactions come from, in binlog order. *binlog.Reader is the
// implementation; pipelinetest.Source is the loop's and the relay's tests'
// binlog in memory.
type Source interface {
	// Server describes the source server as read when the source was
	// opened: its flavour, server id and UUID (recorded in checkpoints)
	// and its executed and purged GTID sets (for --start).
	Server() *binlog.Server

	// SetLayouts gives the next RunResume the outbox tables' column
	// definitions in force at its start position, as the checkpoint
	// stored them; nil when there are none (the source then finds them
	// itself).
	SetLayouts(layouts map[string]schema.TableDef)

	// SetPrepared gives the next RunResume the XA transactions prepared
	// before its start position, as the checkpoint stored them.
	SetPrepared(prepared []binlog.PreparedXA)

	// RunResume streams every transaction after from into q, until ctx
	// ends or an error. When resume names a transaction, the first
	// resume.Rows outbox rows of it are not queued (an earlier process
	// published them). It guarantees, whatever happens to its connection:
	//   - each transaction is queued once per call, in binlog order, and
	//     its end (Queue.EndTxn) only after all of its outbox rows, so a
	//     GTID set moved over the ends never covers a row not queued;
	//   - a queued row's bytes stay valid and unchanged while referenced.
	// It blocks while q is full. When it returns, it has closed q with
	// its error, and it returns only with an error: ctx's once cancelled,
	// or one that a new call would meet again (a purged binlog, access
	// denied, a row it cannot decode) unless binlog.ConnectionLost says
	// the connection was lost while it started.
	RunResume(ctx context.Context, from *gtid.Set, resume binlog.Resume, q *binlog.Queue) error
}

var _ Source = (*binlog.Reader)(nil)

package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// Live is the live router's commit policy: every commit writes the
// checkpoint that covers it (Sink.Commit), a commit may fall inside a
// binlog transaction with a GTID (the checkpoint names the position in
// it: TxnGTID, TxnRows), and a stop is graceful (stop.go). The router
// runs one session of the loop after another (RunSession); what it does
// between them (the election, the retry, the start position) is its own.
type Live struct {
	// Name, Source and Version are recorded in every checkpoint.
	Name, Source, Version string
	// ShutdownTimeout bounds a stop: past it the open Kafka transaction
	// is aborted and RunSession returns an error wrapping
	// ErrShutdownTimeout. Required.
	ShutdownTimeout time.Duration
	// Log is the loop's logger.
	Log zerolog.Logger
	// Committed, if set, is called after every commit Kafka accepted.
	Committed func()
	// Fenced, if set, names an error that ends a session: it returns
	// the error to return instead of err, or nil to keep err. records
	// is the open Kafka transaction's record count and began when its
	// first record was produced.
	Fenced func(err error, records int, began time.Time) error
}

// NewLive returns the live router's loop over source, by cfg (zero
// values take the defaults) and live.
func NewLive(cfg Config, live Live, source Source) (*Loop, error) {
	l, err := newLoop(cfg, source, live.Log)
	if err != nil {
		return nil, err
	}
	l.live = &live
	return l, nil
}

// Reset clears what the loop knows of its previous session: its
// position, commits and records, and the records the brokers refused
// (NoteRefused); the rows marked as row errors (JudgeRefused) stay.
func (l *Loop) Reset() {
	l.at, l.cur, l.events, l.commits = position{}, commitPoint{}, 0, 0
	l.overran.Store(false)
	l.ts.reset()
}

// RunSession runs one session of the live loop: it reads the source
// after start (inside cp's binlog transaction when cp names one, with
// cp's outbox layouts and prepared XA transactions), routes every row and
// produces it into out, which the caller has opened and which has read
// cp (nil when none is stored), committing each Kafka transaction with
// the checkpoint that covers it. It returns when ctx ends, nil once
// everything before the stop is committed (an error wrapping
// ErrShutdownTimeout when that took longer than ShutdownTimeout), or with
// the first error, after aborting the open Kafka transaction; an error
// with which the source stopped is a *SourceError. It does not close out.
// Call Reset before it.
func (l *Loop) RunSession(ctx context.Context, out Sink, start *gtid.Set, cp *checkpoint.Checkpoint) error {
	l.out = out
	l.at.committed, l.at.pending = start, start.Clone()
	l.ts.forget(func(g string) bool { return covers(start, g) })
	l.at.layouts = nil
	if cp != nil {
		l.at.layouts = cp.Layouts
	}
	l.source.SetLayouts(l.at.layouts)
	l.at.xa = nil
	if cp != nil {
		l.at.xa = cp.XAPrepared
	}
	l.source.SetPrepared(l.at.xa)
	l.cur.last = time.Now()
	var resume binlog.Resume
	if cp != nil && cp.TxnGTID != "" && cp.TxnRows > 0 {
		resume = binlog.Resume{GTID: cp.TxnGTID, Rows: cp.TxnRows}
		l.at.openGTID, l.at.openRows = cp.TxnGTID, cp.TxnRows
		l.at.partial = true
	}

	readCtx, stopReading := context.WithCancel(context.WithoutCancel(ctx))
	defer stopReading()
	q := binlog.NewQueue(l.cfg.QueueRows, l.cfg.QueueBytes)
	readErr := make(chan error, 1)
	go func() { readErr <- l.source.RunResume(readCtx, start, resume, q) }()
	err := l.run(ctx, q)
	stopReading()
	rerr := <-readErr
	if errors.Is(err, binlog.ErrReaderStopped) {
		err = nil
		if rerr != nil {
			err = &SourceError{rerr}
		}
	}
	return err
}

// Commits is the number of commits of the current session.
func (l *Loop) Commits() int { return l.commits }

// Committed is the GTID set the last checkpoint Kafka accepted covers
// (the session's start before its first commit), nil before a session.
func (l *Loop) Committed() *gtid.Set { return l.at.committed }

// Pending is the GTID set the next checkpoint would cover, nil before a
// session.
func (l *Loop) Pending() *gtid.Set { return l.at.pending }

// NoteRefused sees a record the producer failed with err; it keeps it
// when the brokers refused its timestamp (INVALID_TIMESTAMP). Safe for
// concurrent use: franz-go calls it from its own goroutines.
func (l *Loop) NoteRefused(rec *kgo.Record, err error) { l.ts.note(rec, err) }

// JudgeRefused marks, after a session failed with INVALID_TIMESTAMP, the
// refused records outside their topic's timestamp window at now (read
// with the Kafka options opts), so that the next session handles those
// rows as row errors. It returns how many rows it newly marked; 0 means
// none could be blamed.
func (l *Loop) JudgeRefused(ctx context.Context, opts []kgo.Opt, now time.Time) int {
	return l.ts.judge(ctx, opts, now)
}

// SourceError marks the error with which the Source stopped a session,
// so that the caller judges it as the source's, not as Kafka's.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

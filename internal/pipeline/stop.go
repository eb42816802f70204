package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// stop is the stop of one active session's loop, asked by the end of
// Run's context. A stop is two-phase, like net/http.Server.Shutdown: the
// loop takes no row past the next point where it may stop (stopDue),
// commits, and returns; ShutdownTimeout after the stop the work context
// is cancelled with ErrShutdownTimeout and the open Kafka transaction is
// aborted.
//
// The stop is noticed when it is asked, whatever the loop is doing then
// (handling a batch, committing, blocked in Produce on a full buffer): it
// is logged at once and its timers start then, not when the loop next
// looks.
type stop struct {
	asked <-chan struct{} // closed when the stop is asked
	cut   chan struct{}   // closed half ShutdownTimeout after it

	mu     sync.Mutex
	timers []*time.Timer
	ended  bool
}

// watchStop watches ctx for the loop: when ctx ends it logs the stop,
// closes cut half ShutdownTimeout later and calls cancelWork with
// ErrShutdownTimeout ShutdownTimeout later. end releases the watch and
// its timers; call it when the loop returns.
func (l *Loop) watchStop(ctx context.Context, cancelWork context.CancelCauseFunc) (st *stop, end func()) {
	st = &stop{asked: ctx.Done(), cut: make(chan struct{})}
	timeout := l.live.ShutdownTimeout
	unwatch := context.AfterFunc(ctx, func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.ended {
			return
		}
		l.log.Info().Dur("shutdown_timeout", timeout).Msg("stopping: finishing the current transaction")
		st.timers = append(st.timers,
			time.AfterFunc(timeout/2, func() { close(st.cut) }),
			time.AfterFunc(timeout, func() {
				l.overran.Store(true)
				cancelWork(fmt.Errorf("%w (%s, --shutdown-timeout): the open Kafka transaction was aborted; the next start resumes from the last committed checkpoint", ErrShutdownTimeout, timeout))
			}))
	})
	return st, func() {
		unwatch()
		st.mu.Lock()
		defer st.mu.Unlock()
		st.ended = true
		for _, t := range st.timers {
			t.Stop()
		}
	}
}

// requested reports whether the stop was asked.
func (s *stop) requested() bool {
	select {
	case <-s.asked:
		return true
	default:
		return false
	}
}

// halfway reports whether half ShutdownTimeout has passed since the stop.
func (s *stop) halfway() bool {
	select {
	case <-s.cut:
		return true
	default:
		return false
	}
}

// stopDue reports whether the loop stops here, before its next row, with
// a last commit (finish): a stop was asked, and no binlog transaction has
// rows produced and not covered by pending (a transaction boundary, or a
// transaction none of whose outbox rows was produced yet), or one has, the
// stop is half ShutdownTimeout old, and a checkpoint can name the position
// inside it (its GTID). It is asked before every row and after every
// batch, so a stop is acted on between any two commits, also inside a
// batch.
func (l *Loop) stopDue(st *stop) bool {
	if !st.requested() {
		return false
	}
	if l.at.openRows == 0 {
		return true
	}
	if l.at.openGTID == "" || !st.halfway() {
		return false
	}
	l.log.Info().Str("txn_gtid", l.at.openGTID).Int("txn_rows", l.at.openRows).
		Msg("stopping inside a binlog transaction: committing it as far as it was produced; the next start resumes inside it")
	return true
}

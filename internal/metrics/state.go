package metrics

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// state is what lag, checkpoint age and readiness are derived from. It
// holds times, not derived values, so readers see the truth at read time.
type state struct {
	mu sync.Mutex

	start time.Time // New

	gtidSet string // checkpoint: the GTID set of the last commit point
	flavor  string

	committedAt time.Time // wall time of the last commit point
	sourceTime  time.Time // source commit time of the last committed transaction
	commits     uint64

	// pending counts transactions seen since the last commit point.
	pending int
	// heartbeatAt is the wall time of the last heartbeat that found
	// nothing pending: the source had nothing newer at that time.
	heartbeatAt time.Time
	// caughtUp is set by such a heartbeat and cleared by the next
	// transaction.
	caughtUp bool

	// txnBegan is when the open Kafka transaction was begun; zero when
	// none is open.
	txnBegan time.Time
}

// lag is how far the checkpoint is behind the source at now.
func (m *Metrics) lag(now time.Time) time.Duration {
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	return m.st.lagLocked(now)
}

func (s *state) lagLocked(now time.Time) time.Duration {
	if s.caughtUp {
		return 0
	}
	// The checkpoint covers everything the source committed up to the
	// later of: the last committed transaction, and the last heartbeat
	// with nothing pending (everything up to then was read and committed).
	pos := s.sourceTime
	if s.heartbeatAt.After(pos) {
		pos = s.heartbeatAt
	}
	if pos.IsZero() {
		return 0 // nothing known yet; /readyz says so
	}
	return max(0, now.Sub(pos)) // the source clock may be ahead of ours
}

func (m *Metrics) checkpointAge(now time.Time) time.Duration {
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	last := m.st.committedAt
	if last.IsZero() {
		last = m.st.start
	}
	return max(0, now.Sub(last))
}

func (m *Metrics) isCaughtUp() bool {
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	return m.st.caughtUp
}

// Snapshot is a consistent view of the position and counters.
type Snapshot struct {
	Time         time.Time     // when it was taken (the Metrics clock)
	GTIDSet      string        // checkpoint GTID set; "" before the first commit point
	Flavor       string        // "mysql", "mariadb" or ""
	Lag          time.Duration // as binlog_router_lag_seconds
	CaughtUp     bool          // as binlog_router_caught_up
	CommittedAt  time.Time     // wall time of the last commit point; zero before
	Commits      uint64        // commit points
	Events       uint64        // records routed
	Transactions uint64        // binlog transactions seen
}

// Snapshot returns the current position and counters.
func (m *Metrics) Snapshot() Snapshot {
	now := m.cfg.now()
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	return Snapshot{
		Time:         now,
		GTIDSet:      m.st.gtidSet,
		Flavor:       m.st.flavor,
		Lag:          m.st.lagLocked(now),
		CaughtUp:     m.st.caughtUp,
		CommittedAt:  m.st.committedAt,
		Commits:      m.st.commits,
		Events:       m.events.Load(),
		Transactions: m.txns.Load(),
	}
}

// Ready reports whether the relay is streaming and checkpointing within
// limits: the last commit point, or the last heartbeat that found nothing
// pending, is at most the readiness window old (see IdleCheckpoint). The
// error, one line, says why not.
func (m *Metrics) Ready() error {
	now := m.cfg.now()
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	s := &m.st
	last, what := s.committedAt, "checkpoint"
	if s.heartbeatAt.After(last) {
		last, what = s.heartbeatAt, "caught-up heartbeat"
	}
	window := m.cfg.staleAfter
	if last.IsZero() {
		return fmt.Errorf("not streaming yet: no checkpoint or caught-up heartbeat in %s since start", round(now.Sub(s.start)))
	}
	if age := now.Sub(last); age > window {
		return fmt.Errorf("stalled: last %s %s ago, limit %s (%d transactions pending)", what, round(age), window, s.pending)
	}
	return nil
}

// readiness is what /readyz answers: the extra condition ready (if not
// nil), then Ready.
func (m *Metrics) readiness(ready ReadyFunc) error {
	if ready != nil {
		if err := ready(); err != nil {
			return err
		}
	}
	return m.Ready()
}

// handlerReadiness is readiness with the Handler's extra condition, as
// binlog_router_ready reports it.
func (m *Metrics) handlerReadiness() error {
	var ready ReadyFunc
	if p := m.readyCheck.Load(); p != nil {
		ready = *p
	}
	return m.readiness(ready)
}

// CheckpointGTIDSet is the GTID set of the last commit point ("" before
// the first).
func (m *Metrics) CheckpointGTIDSet() string {
	m.st.mu.Lock()
	defer m.st.mu.Unlock()
	return m.st.gtidSet
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// flavorOf tells the flavor from a GTID set's text: MySQL sets are
// uuid:intervals, MariaDB sets domain-server-sequence.
func flavorOf(set string) string {
	switch {
	case set == "":
		return ""
	case strings.Contains(set, ":"):
		return "mysql"
	default:
		return "mariadb"
	}
}

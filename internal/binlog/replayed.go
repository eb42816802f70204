package binlog

import (
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// MaxReplayedRun is how many transactions in a row one connection may
// send that the reader already has before the reader stops with a
// *PositionIgnoredError. A server that honours the GTID position it is
// asked for never sends even one; a source that streams its binlog from
// the start on every connection sends its whole history.
const MaxReplayedRun = 1000

// ErrPositionIgnored means the server sent transactions that the GTID set
// the reader asked it to start after already contains, past
// MaxReplayedRun in a row: it ignores the requested position. See
// PositionIgnoredError.
var ErrPositionIgnored = errors.New("the server ignores the GTID position it was asked to start from")

// PositionIgnoredError reports a server that streams transactions the
// reader already has (a proxy that drops the start position, a source that
// reads it only under a protocol flag the router's client does not send,
// a failover to a server whose binlog is another one's). Nothing it sent
// again was handed over. It wraps ErrPositionIgnored and ErrServerConfig
// (exit code 2).
type PositionIgnoredError struct {
	Server      string // host:port
	Version     string // the server's version
	Start       string // the GTID set the connection asked to start after
	First, Last string // the first and last transaction of the run
	Count       int    // transactions in the run
}

func (e *PositionIgnoredError) Error() string {
	return fmt.Sprintf("binlog server %s (version %s): %v: asked to start after GTID set %q, it sent %d transactions in a row that set already contains (%s to %s); "+
		"they were skipped, not published again, and the router stopped. The binlog source must honour the start position of COM_BINLOG_DUMP_GTID (MySQL) or @slave_connect_state (MariaDB): "+
		"connect the router to the MySQL or MariaDB server itself rather than through a proxy or load balancer that changes or drops it, and not to a server that reads it only under the BINLOG_THROUGH_GTID flag (Dolt), which the router's replication client does not send",
		e.Server, e.Version, ErrPositionIgnored, e.Start, e.Count, e.First, e.Last)
}

// Unwrap makes errors.Is true for ErrPositionIgnored and ErrServerConfig.
func (e *PositionIgnoredError) Unwrap() []error { return []error{ErrPositionIgnored, ErrServerConfig} }

// covered reports whether the transaction id is in have: a MySQL GTID in
// the set, a MariaDB GTID at or before the domain's position (sequence
// numbers grow within a domain under gtid_strict_mode). An anonymous
// transaction is never covered.
func covered(have *gtid.Set, id gtidID) bool {
	switch id.flavor {
	case gtid.MySQL:
		return have.ContainsMySQL(id.sid, id.tag, id.gno)
	case gtid.MariaDB:
		return have.ContainsMariaDB(id.domain, id.seq)
	}
	return false
}

// replayGuard keeps transactions the reader already has from being handed
// over again, whatever the server sends. have is the set the reader
// resumed from plus every transaction handed over since (the reader's
// delivered set, which it updates as transactions are handed over), so it
// is the set each new connection asks to start after. A transaction in it
// is skipped whole; a run of skipped transactions is logged once, at its
// end, and a run longer than MaxReplayedRun on one connection is a
// *PositionIgnoredError. The transaction of a Resume is not in have and
// is not touched. Not safe for concurrent use.
type replayGuard struct {
	have     *gtid.Set
	server   string // host:port
	version  string
	observer Observer
	log      zerolog.Logger

	// inexact is set for a MariaDB server without gtid_strict_mode: there
	// a GTID below its domain's position may be new (logged out of order),
	// so nothing is skipped and a replaying source is not detected; a
	// duplicate is preferred to a lost row.
	inexact bool

	start       string // the set the current connection asked to start after
	first, last string // the current run
	n           int
}

// connected starts a connection that asked to start after have.
func (g *replayGuard) connected() {
	g.endRun()
	g.start = g.have.String()
}

// skip reports whether t is already in have and must not be handed over;
// it counts it (Observer.Replayed). A transaction not in have ends the
// current run. The error is the *PositionIgnoredError of a run past
// MaxReplayedRun.
func (g *replayGuard) skip(t *Txn) (bool, error) {
	if g.inexact || !covered(g.have, t.id) {
		g.endRun()
		return false, nil
	}
	if g.n == 0 {
		g.first = t.GTID
	}
	g.last = t.GTID
	g.n++
	g.observer.Replayed(t.GTID)
	if g.n > MaxReplayedRun {
		err := &PositionIgnoredError{Server: g.server, Version: g.version, Start: g.start, First: g.first, Last: g.last, Count: g.n}
		g.endRun()
		return true, err
	}
	return true, nil
}

// endRun logs the current run of skipped transactions, if any, and
// forgets it.
func (g *replayGuard) endRun() {
	if g.n == 0 {
		return
	}
	g.log.Warn().Str("server", g.server).Str("server_version", g.version).Str("resume_gtid_set", g.start).
		Str("first_gtid", g.first).Str("last_gtid", g.last).Int("transactions", g.n).
		Msg("the binlog server sent transactions the GTID set it was asked to start after already contains; skipped them, none was published again (a server that honours the start position never does this: check for a proxy, a failover to another server, or a source that ignores the position)")
	g.first, g.last, g.n = "", "", 0
}

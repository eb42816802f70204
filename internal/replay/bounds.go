package replay

import (
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// verdict is what happens to one binlog transaction.
type verdict int

const (
	skip    verdict = iota // outside the range: read past it, publish nothing
	include                // in the range: publish its rows
	stop                   // the range ended before it: publish nothing, stop
)

// reason says why a replay stopped.
type reason string

const (
	reachedTo       reason = "reached --to-gtid"
	reachedToTime   reason = "reached a transaction committed after --to-time"
	reachedExecuted reason = "reached the server's executed GTID set read at start"
)

// bounds decides, transaction by transaction in binlog order, what is in
// the replayed range and when it is over. It is pure: the binlog reading
// happens elsewhere.
type bounds struct {
	to       *gtid.Set // only transactions it contains; over once pos covers it
	toReason reason    // why reaching to ends the replay
	toTime   time.Time
	fromTime time.Time
	started  bool      // a transaction at or after fromTime was seen
	timeStop bool      // a transaction after toTime was seen
	pos      *gtid.Set // from plus every transaction passed
}

// newBounds checks the range against the server's executed set and returns
// its bounds. to nil means executed.
func newBounds(from, to *gtid.Set, fromTime, toTime time.Time, executed *gtid.Set) (*bounds, error) {
	f := executed.Flavor()
	if from.Flavor() != f {
		return nil, fmt.Errorf("--from-gtid %q is a %s GTID set but the server is %s", from, from.Flavor(), f)
	}
	b := &bounds{to: to, toReason: reachedTo, toTime: toTime, fromTime: fromTime, pos: from.Clone()}
	switch {
	case to == nil:
		b.to, b.toReason = executed, reachedExecuted
	case to.Flavor() != f:
		return nil, fmt.Errorf("--to-gtid %q is a %s GTID set but the server is %s", to, to.Flavor(), f)
	case !executed.Contains(to):
		return nil, fmt.Errorf("--to-gtid %q goes beyond what the server has executed (%q): it has not executed %s; a replay can only end at a transaction that exists", to, executed, to.Subtract(executed))
	}
	return b, nil
}

// over reports whether the range has been passed completely.
func (b *bounds) over() bool { return b.pos.Contains(b.to) }

// reason says why the range ended; call once enter returned stop or over
// is true.
func (b *bounds) reason() reason {
	if b.timeStop {
		return reachedToTime
	}
	return b.toReason
}

// enter classifies a transaction by its GTID and commit time, at its first
// batch.
func (b *bounds) enter(id string, committed time.Time) (verdict, error) {
	if !b.toTime.IsZero() && committed.After(b.toTime) {
		b.timeStop = true
		return stop, nil
	}
	if !b.fromTime.IsZero() && !b.started {
		if committed.Before(b.fromTime) {
			return skip, nil
		}
		b.started = true
	}
	if id == "" {
		return skip, nil // anonymous: in no GTID range
	}
	one := gtid.New(b.pos.Flavor())
	if err := one.Add(id); err != nil {
		return skip, fmt.Errorf("transaction GTID from the binlog: %w", err)
	}
	if !b.to.Contains(one) {
		return skip, nil
	}
	return include, nil
}

// leave moves the position past the transaction that ended and reports
// whether the range is over.
func (b *bounds) leave(id string) (bool, error) {
	if id != "" {
		if err := b.pos.Add(id); err != nil {
			return false, fmt.Errorf("transaction GTID from the binlog: %w", err)
		}
	}
	return b.over(), nil
}

package checkpoint

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// OperatorMark ends the Version of a checkpoint written by an operator
// (binlog-router checkpoint set) rather than by a running router.
const OperatorMark = " (checkpoint set)"

// Owner names the router that writes a checkpoint, as ActiveSigns looks
// for it.
type Owner struct {
	Group            string        // its election group (--ha)
	TransactionalIDs []string      // its transactional ids (exactly-once)
	ServerID         uint32        // its --server-id: its replica id on the source
	IdleCheckpoint   time.Duration // its --idle-checkpoint
}

// ActiveSigns returns every sign that the router o is running, in words
// (a is what Kafka shows of it: kafka.DescribeActivity)
// for an operator; none means it looks stopped. stored is its current
// checkpoint (nil if none); source is a connection to the source server
// (nil to skip that sign). The signs:
//
//   - the election group has members: a router with --ha is a member
//     while it runs, active or standby;
//   - the transactional id has a transaction that is not finished: an
//     exactly-once router is producing;
//   - the checkpoint was written by a router less than 2x IdleCheckpoint
//     ago: a running router writes one at least every IdleCheckpoint while
//     the binlog moves (never while the source is idle: heartbeats do not
//     move it, so an old checkpoint proves nothing);
//   - its binlog connection is open on the source, whether the source is
//     busy or idle: a replica with the router's server id is registered
//     (SHOW SLAVE HOSTS / SHOW REPLICAS), or, when source's user may not
//     list replicas, a connection of that user streams the binlog (SHOW
//     PROCESSLIST; see binlogConnectionSign).
//
// No single sign is proof either way (a router without --ha joins no
// group, one that is idle has no transaction and writes no checkpoint, and
// the last sign needs the router's --server-id, or, without the privilege
// to list replicas, the router connecting as source's user, and then also
// counts another router's connection as that user), so callers refuse on
// any of them. warnings name the signs that could not be checked.
func ActiveSigns(ctx context.Context, a Activity, source *sql.DB, o Owner, stored *Checkpoint) (signs, warnings []string, err error) {
	if len(a.Members) > 0 {
		signs = append(signs, fmt.Sprintf("its election group %q has members %s", o.Group, strings.Join(a.Members, ", ")))
	}
	if a.InTransaction() {
		signs = append(signs, fmt.Sprintf("its transactional id %q is in state %s since %s", a.TransactionalID, a.TxnState, a.TxnStart.Format(time.RFC3339)))
	}
	if stored != nil && !strings.HasSuffix(stored.Version, OperatorMark) {
		if age := time.Since(stored.Time); age < 2*o.IdleCheckpoint {
			signs = append(signs, fmt.Sprintf("its checkpoint was written %s ago (a running router writes one at least every --idle-checkpoint %s while the binlog moves; a stopped one is recognised after twice that)",
				age.Round(time.Millisecond), o.IdleCheckpoint))
		}
	}
	if source != nil {
		sign, warning := binlogConnectionSign(ctx, source, o.ServerID)
		if sign != "" {
			signs = append(signs, sign)
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	return signs, warnings, nil
}

// Activity is what Kafka shows about the routers that write one
// checkpoint: the members of their election group and the state of their
// transactional ids.
type Activity struct {
	// Members are the election group's members as "client-id@host".
	Members []string
	// TransactionalID is the id TxnState describes: the first of the
	// router's ids with a transaction not finished, or else the first
	// Kafka knows.
	TransactionalID string
	// TxnState is the transactional id's state (Empty, Ongoing,
	// PrepareCommit, CompleteCommit, ...); "" when Kafka does not know the
	// id (no exactly-once router of that name ran, or the id expired).
	TxnState string
	// TxnStart is when the open transaction began, for the states
	// InTransaction reports.
	TxnStart time.Time
}

// InTransaction reports whether the transactional id has a transaction
// that is not finished: the router is producing right now.
func (a Activity) InTransaction() bool {
	switch a.TxnState {
	case "Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence":
		return true
	}
	return false
}

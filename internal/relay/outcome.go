package relay

import (
	"errors"
	"fmt"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// ErrCheckpointBehind means a new session read a checkpoint that does not
// cover one Kafka acknowledged to this process: Kafka lost a committed
// transaction, or its commit markers are missing from the checkpoint
// partition. Resuming from it would publish rows again.
var ErrCheckpointBehind = errors.New("the stored checkpoint is behind one Kafka acknowledged")

// outcomes is what the sessions of one runRetrying know about their
// commits, checked against the checkpoint each new session reads.
type outcomes struct {
	// acked is the GTID set of the last commit Kafka acknowledged
	// (EndTransaction returned nil), nil before the first.
	acked *gtid.Set
	// unknown is the GTID set of a commit whose answer was lost (the
	// session ended after EndTransaction failed), nil if none.
	unknown *gtid.Set
}

// check compares the checkpoint a new session read after initialising
// its producer with what earlier sessions know. A checkpoint behind an
// acknowledged one is an error wrapping ErrCheckpointBehind, counted in
// the errors metric as checkpoint_behind: never resumed from. The outcome
// of a commit whose answer was lost is logged.
func (r *Relay) checkOutcomes(o *outcomes, read *gtid.Set) error {
	if o.acked != nil && !read.Contains(o.acked) {
		r.cfg.Metrics.Failed("checkpoint_behind")
		r.log.Error().Str("acknowledged_gtid_set", o.acked.String()).Str("read_gtid_set", read.String()).
			Msg("the checkpoint read is behind one Kafka acknowledged; not resuming from it")
		return fmt.Errorf("%w: Kafka acknowledged the commit of checkpoint %s, but the checkpoint topic now gives %s "+
			"(a lost committed transaction, or commit markers missing from its partition: kafka-transactions.sh find-hanging); "+
			"resuming from it would publish the rows between again. Check what the outbox topics hold and set the position with "+
			"binlog-router checkpoint set", ErrCheckpointBehind, o.acked, read)
	}
	if o.unknown != nil {
		outcome := "aborted: its rows are produced again"
		if read.Contains(o.unknown) {
			outcome = "committed: resuming after it"
		}
		r.log.Info().Str("gtid_set", o.unknown.String()).Msgf("the commit whose answer was lost was %s", outcome)
		o.unknown = nil
	}
	return nil
}

// sessionEnded records what a session that ended with err leaves known:
// its last acknowledged commit (committed), and a commit whose answer was
// lost (of pending).
func (o *outcomes) sessionEnded(committed, pending *gtid.Set, err error) {
	if committed != nil {
		o.acked = committed.Clone()
	}
	if errors.Is(err, kafka.ErrCommitUnknown) && pending != nil {
		o.unknown = pending.Clone()
	}
}

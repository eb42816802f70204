package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

// ErrBeyondExecuted means a GTID set names transactions the server has not
// executed: a router started there would wait for them, or skip them when
// they come with another meaning.
var ErrBeyondExecuted = errors.New("GTID set beyond the server's executed set")

// CheckServable reports whether a router whose checkpoint is set could
// resume from it on reader's server, and returns nil if so:
//
//   - set must not go beyond the server's executed set (MySQL:
//     @@gtid_executed contains it; MariaDB: @@gtid_binlog_pos has every
//     domain of set with a sequence number at least set's), else an error
//     wrapping ErrBeyondExecuted that names the GTIDs;
//   - the server must still have the binlog after set, else an error
//     wrapping binlog.ErrBinlogPurged. MySQL: set must contain
//     @@gtid_purged. Both flavours: the server is asked to stream from
//     set, exactly as the router would, and must not answer with error
//     1236 (purged). Asking is the only exact test for
//     MariaDB, where which binlog file a position needs depends on the
//     Gtid_list events of the files and on server ids; the stream is
//     closed at the first transaction or heartbeat (at most about one
//     heartbeat period).
//
// The reader must have been opened with a replica server id no running
// replica uses: the server drops an older connection with the same id.
func CheckServable(ctx context.Context, reader *binlog.Reader, set *gtid.Set) error {
	s := reader.Server()
	if set.Flavor() != s.Flavor {
		return fmt.Errorf("GTID set %q is %s but the server is %s", set, set.Flavor(), s.Flavor)
	}
	if !s.Executed.Contains(set) {
		return fmt.Errorf("%w: %q goes beyond what the server has executed (%q): it has not executed %s", ErrBeyondExecuted, set, s.Executed, set.Subtract(s.Executed))
	}
	if s.Flavor == gtid.MySQL && !set.Contains(s.Purged) {
		return fmt.Errorf("%w: the server has purged %s, which %q lacks (@@gtid_purged is %q); the router could never read those transactions: set a GTID set that contains @@gtid_purged",
			binlog.ErrBinlogPurged, s.Purged.Subtract(set), set, s.Purged)
	}
	err := probe(ctx, reader, set)
	var pe *binlog.PurgedError
	if !errors.As(err, &pe) {
		return err
	}
	hint := "set a later GTID set"
	if file, before, lerr := binlog.OldestMariaDB(ctx, reader.DB()); lerr == nil && !before.IsEmpty() {
		hint = fmt.Sprintf("its oldest binlog %s starts after %q: set a GTID set at or after that", file, before)
	}
	return fmt.Errorf("%w: the server no longer has the binlog after %q (server: %s); %s", binlog.ErrBinlogPurged, set, pe.Server, hint)
}

// probe streams the binlog after set until the reader hands over
// something (a transaction or a heartbeat) or stops with an error.
func probe(ctx context.Context, reader *binlog.Reader, set *gtid.Set) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	q := binlog.NewQueue(1, 1<<20)
	done := make(chan error, 1)
	go func() { done <- reader.Run(ctx, set, q) }()
	for {
		b, closed := q.Take()
		switch {
		case !b.Empty():
			cancel()
			<-done
			return nil
		case closed:
			err := <-done
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("asking the server to stream the binlog after %q: no answer within 30s", set)
			}
			if re := (*binlog.EventError)(nil); errors.As(err, &re) {
				return nil // the binlog is there; the row is for the run to report
			}
			return err
		}
		<-q.Ready()
	}
}

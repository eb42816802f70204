package relay

import (
	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// preparedFrom is the table of prepared XA transactions a checkpoint
// carries, for the reader; none without a checkpoint.
func preparedFrom(cp *checkpoint.Checkpoint) []binlog.PreparedXA {
	if cp == nil {
		return nil
	}
	return cp.XAPrepared
}

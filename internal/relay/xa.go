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
	out := make([]binlog.PreparedXA, 0, len(cp.XAPrepared))
	for _, p := range cp.XAPrepared {
		out = append(out, binlog.PreparedXA{XID: p.XID, GTID: p.GTID, File: p.BinlogFile, Pos: p.BinlogPos, Outbox: p.Outbox})
	}
	return out
}

// preparedTo is the checkpoint's form of the table.
func preparedTo(list []binlog.PreparedXA) []checkpoint.PreparedXA {
	var out []checkpoint.PreparedXA
	for _, p := range list {
		out = append(out, checkpoint.PreparedXA{XID: p.XID, GTID: p.GTID, BinlogFile: p.File, BinlogPos: p.Pos, Outbox: p.Outbox})
	}
	return out
}

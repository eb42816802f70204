package checkpoint

import (
	"errors"
	"fmt"
	"time"
)

// ErrRecoveryUnfinished means the router's checkpoint record holds the
// progress of a `recover` that has not finished: the router must not
// stream from it (recover has published only part of its window, and
// hands over at its own snapshot once done).
var ErrRecoveryUnfinished = errors.New("a recover of this router is unfinished")

// Recovery is the progress of a `recover` that has not finished. Each of
// its Kafka transactions but the last writes the router's checkpoint
// record with the checkpoint's other fields unchanged and Recovery set,
// committed with the records: so the progress is exactly what Kafka
// holds. The last one writes the checkpoint at Snapshot without
// Recovery. A checkpoint a router or `checkpoint set` writes replaces
// it, which drops the progress.
type Recovery struct {
	// Snapshot is the GTID set of the first run's snapshot: every row of
	// the window committed in it and up to After was handled (published,
	// already in Kafka, or dead-lettered); the router is handed over there.
	Snapshot     string `json:"snapshot"`
	SnapshotFile string `json:"snapshot_file,omitempty"`
	SnapshotPos  uint64 `json:"snapshot_pos,omitempty"`
	// Window describes the recovery's window (times, condition, tables,
	// order); a recover given another window starts over.
	Window string `json:"window"`
	// Table is the outbox table being read (db.table); the tables before
	// it in the window's list are done.
	Table string `json:"table"`
	// After is the last row handled of Table, by its primary key as the
	// server returns it; AfterNullCreated says its creation time is NULL
	// (created-at order). Empty: none of Table yet.
	After            []byte `json:"after,omitempty"`
	AfterNullCreated bool   `json:"after_null_created,omitempty"`
	// Published counts the records committed so far, over every run.
	Published int64     `json:"published"`
	Written   time.Time `json:"written"`
}

// Unfinished returns an error wrapping ErrRecoveryUnfinished when c holds
// a recovery's progress, naming where it is and what to do; nil
// otherwise.
func (c *Checkpoint) Unfinished() error {
	if c == nil || c.Recovery == nil {
		return nil
	}
	r := c.Recovery
	return fmt.Errorf("checkpoint %q: %w (written %s, table %s, %d records published, snapshot %q): run binlog-router recover again with the same window to finish it (it goes on where it stopped), or set the checkpoint with binlog-router checkpoint set to drop it",
		c.Name, ErrRecoveryUnfinished, r.Written.Format(time.RFC3339), r.Table, r.Published, r.Snapshot)
}

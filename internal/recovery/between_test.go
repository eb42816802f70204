package recovery

import (
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/pipeline/pipelinetest"
)

// TestCommittedBetween: the ids of the rows committed after the first
// snapshot and within the second, and none of a transaction after it.
func TestCommittedBetween(t *testing.T) {
	src := pipelinetest.NewSource()
	src.Txn(1, 1)
	src.Txn(2, 2, 3)
	src.Txn(3)
	src.Txn(4, 4, 5)
	src.Txn(5, 6)
	from, to := mustSet(t, "0-1-2"), mustSet(t, "0-1-4")

	ids, txns, err := committedBetween(t.Context(), src, from, to)
	require.NoError(t, err)
	assert.Equal(t, 2, txns, "transactions 0-1-3 and 0-1-4")
	assert.Equal(t, 2, ids.Len())
	for id, want := range map[int]bool{3: false, 4: true, 5: true, 6: false} {
		assert.Equal(t, want, ids.Has([]byte(pipelinetest.EventID(id))), "event %d", id)
	}

	ids, txns, err = committedBetween(t.Context(), src, to, from)
	require.NoError(t, err)
	assert.Equal(t, 0, ids.Len()+txns, "nothing between a snapshot and an earlier one")
	assert.Len(t, src.Starts(), 1, "the binlog is not read when there is nothing to read")

	src.Fail = binlog.ErrBinlogPurged
	_, _, err = committedBetween(t.Context(), src, from, to)
	assert.True(t, errors.Is(err, binlog.ErrBinlogPurged), "error %v", err)
}

func mustSet(t *testing.T, s string) *gtid.Set {
	t.Helper()
	set, err := gtid.Parse(gtid.MariaDB, s)
	require.NoError(t, err)
	return set
}

// TestResumeDecides: a resume goes on only for the same window and a
// binlog it can read from the stored snapshot; otherwise the whole window
// is read again (nil ids, no error).
func TestResumeDecides(t *testing.T) {
	src := pipelinetest.NewSource()
	src.Txn(1, 1)
	src.Txn(2, 2)
	src.Txn(3, 3)
	cfg := &Config{Since: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), Order: OrderAuto, Binlog: src}
	snap := Snapshot{Flavor: gtid.MariaDB, GTID: "0-1-3"}
	stored := &checkpoint.Recovery{Snapshot: "0-1-1", Window: cfg.Window(), Table: "shop.outbox", After: []byte("7")}

	cfg.Resume = stored
	ids, err := resume(t.Context(), cfg, gtid.MariaDB, snap, zerolog.Nop())
	require.NoError(t, err)
	require.NotNil(t, ids)
	assert.Equal(t, 2, ids.Len(), "the rows of 0-1-2 and 0-1-3")

	other := *stored
	other.Window = "since 2026-12-05T09:00:00Z; tables ; order auto"
	cfg.Resume = &other
	ids, err = resume(t.Context(), cfg, gtid.MariaDB, snap, zerolog.Nop())
	require.NoError(t, err)
	assert.Nil(t, ids, "another window starts over")

	cfg.Resume = stored
	src.Fail = binlog.ErrBinlogPurged
	ids, err = resume(t.Context(), cfg, gtid.MariaDB, snap, zerolog.Nop())
	require.NoError(t, err)
	assert.Nil(t, ids, "a purged binlog since the stored snapshot starts over")
}

package recovery

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
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

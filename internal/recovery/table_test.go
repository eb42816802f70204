package recovery

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/schema"
)

func TestWindow(t *testing.T) {
	since := time.Date(2026, 12, 5, 8, 0, 0, 123456000, time.UTC)
	s := &source{name: schema.TableName{Database: "shop", Table: "outbox"}, key: "id", createdAt: "created_at", createdAtType: "timestamp"}
	cond, args := s.window(since, "")
	assert.Equal(t, "`created_at` >= FROM_UNIXTIME(?)", cond)
	assert.Equal(t, []any{"1796457600.123456"}, args)

	cond, args = s.window(time.Time{}, "status = 'NEW'")
	assert.Equal(t, "(status = 'NEW')", cond)
	assert.Empty(t, args)

	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	d := &source{createdAt: "created_at", createdAtType: "datetime", zone: berlin}
	cond, args = d.window(since, "status <> 'SENT'")
	assert.Equal(t, "`created_at` >= ? AND (status <> 'SENT')", cond)
	assert.Equal(t, []any{"2026-12-05 09:00:00.123456"}, args)
}

func TestParseCreated(t *testing.T) {
	s := &source{createdAtType: "timestamp"}
	got, err := s.parseCreated("1796457600.123456")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 12, 5, 8, 0, 0, 123456000, time.UTC), got)
	got, err = s.parseCreated("1796457600")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC), got)
	got, err = s.parseCreated("0.000000")
	require.NoError(t, err)
	assert.True(t, got.IsZero(), "a zero TIMESTAMP is the zero time, as the binlog reader reads it")

	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	d := &source{createdAtType: "datetime", zone: berlin}
	got, err = d.parseCreated("2026-12-05 09:00:00.5")
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 12, 5, 8, 0, 0, 500000000, time.UTC), got.UTC())
}

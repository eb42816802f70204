package config

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

// --uuid-binary-layout and --datetime-zone are checked by Validate and
// reach the reader.
func TestValueFlags(t *testing.T) {
	c := validRun()
	require.NoError(t, c.Validate())
	rc := c.ReaderConfig(zerolog.Nop(), nil)
	assert.Equal(t, binlog.UUIDStandard, rc.UUIDBinary)
	assert.Nil(t, rc.DatetimeZone, "default: the server's time zone")

	c = validRun()
	c.UUIDBinaryLayout, c.DatetimeZone = "swapped", "-03:30"
	require.NoError(t, c.Validate())
	rc = c.ReaderConfig(zerolog.Nop(), nil)
	assert.Equal(t, binlog.UUIDSwapped, rc.UUIDBinary)
	require.NotNil(t, rc.DatetimeZone)
	_, off := time.Date(2026, 1, 1, 0, 0, 0, 0, rc.DatetimeZone).Zone()
	assert.Equal(t, -(3*3600 + 1800), off)

	c = validRun()
	c.DatetimeZone = "Europe/Berlin"
	require.NoError(t, c.Validate())
	assert.Equal(t, "Europe/Berlin", c.ReaderConfig(zerolog.Nop(), nil).DatetimeZone.String())

	c = validRun()
	c.UUIDBinaryLayout, c.DatetimeZone = "mixed", "CEST"
	err := c.Validate()
	require.Error(t, err)
	assert.ErrorContains(t, err, `--uuid-binary-layout "mixed": use standard or swapped`)
	assert.ErrorContains(t, err, `--datetime-zone: time zone "CEST" is neither an offset like +05:00 nor a zone name like Europe/Berlin`)
}

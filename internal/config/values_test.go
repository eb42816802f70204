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

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute, " 2d ": 48 * time.Hour, "0d1s": time.Second,
	} {
		got, err := ParseAge(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, in := range []string{"", "d", "7", "-1h", "7d-1h", "x7d", "1.5d", "7days"} {
		_, err := ParseAge(in)
		assert.Error(t, err, in)
	}
	var a Age
	assert.Empty(t, a.String())
	assert.NoError(t, a.Set("7d"))
	assert.Equal(t, "7d", a.String())
}

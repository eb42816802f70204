package prune

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCutoff(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	for _, tc := range []struct {
		name      string
		olderThan time.Duration
		covered   time.Time
		margin    time.Duration
		want      time.Time
	}{
		{"age decides", 7 * day, now, 5 * time.Minute, now.Add(-7 * day)},
		{"checkpoint behind the age", time.Hour, now.Add(-2 * time.Hour), 5 * time.Minute, now.Add(-2*time.Hour - 5*time.Minute)},
		{"margin beyond the age", time.Second, now, time.Hour, now.Add(-time.Hour)},
		{"no margin, covered now", time.Second, now, 0, now.Add(-time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Cutoff(now, tc.olderThan, tc.covered, tc.margin)
			assert.True(t, tc.want.Equal(got), "got %s, want %s", got, tc.want)
			assert.False(t, got.After(tc.covered.Add(-tc.margin)), "never after the checkpoint less the margin")
		})
	}
}

func TestUnixArg(t *testing.T) {
	for in, want := range map[time.Time]string{
		time.Unix(1700000000, 123456789): "1700000000.123456",
		time.Unix(1700000000, 0):         "1700000000.000000",
		time.Unix(0, 1000):               "0.000001",
	} {
		assert.Equal(t, want, unixArg(in))
	}
}

package kafka

import (
	"strings"
	"testing"
	"time"
)

func TestTimestampWindowOutside(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	w := TimestampWindow{after: time.Hour, before: unlimited}
	if err := w.Outside(now.Add(59*time.Minute), now, "t"); err != nil {
		t.Errorf("59 min ahead: %v", err)
	}
	if err := w.Outside(now.Add(-1000*time.Hour), now, "t"); err != nil {
		t.Errorf("long ago with no before limit: %v", err)
	}
	err := w.Outside(now.Add(2*time.Hour), now, "orders")
	if err == nil || !strings.Contains(err.Error(), "2h0m0s ahead of now") || !strings.Contains(err.Error(), "message.timestamp.after.max.ms (1h0m0s)") ||
		!strings.Contains(err.Error(), "topic orders") {
		t.Errorf("2 h ahead: %v", err)
	}
	w.before = 24 * time.Hour
	if err := w.Outside(now.Add(-25*time.Hour), now, "t"); err == nil || !strings.Contains(err.Error(), "message.timestamp.before.max.ms") {
		t.Errorf("25 h behind: %v", err)
	}
	w.logAppend = true
	if err := w.Outside(now.Add(2*time.Hour), now, "t"); err != nil {
		t.Errorf("LogAppendTime: the broker sets the timestamp: %v", err)
	}
}

func TestMillis(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"3600000":             time.Hour,
		"0":                   0,
		"9223372036854775807": unlimited,
		"-1":                  unlimited,
		"x":                   42,
	} {
		if got := millis(in, 42); got != want {
			t.Errorf("millis(%q) = %v, want %v", in, got, want)
		}
	}
}

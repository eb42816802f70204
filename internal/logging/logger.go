package logging

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"
)

// Format is the output format of log lines.
type Format string

const (
	// JSON writes one JSON object per line (the default, for machines).
	JSON Format = "json"
	// Console writes human-readable coloured lines.
	Console Format = "console"
)

// New returns a logger writing to w in the given format at the given level
// ("debug", "info", "warn", "error").
func New(w io.Writer, format Format, level string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("invalid log level %q: use debug, info, warn or error", level)
	}
	switch format {
	case JSON, "":
	case Console:
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339}
	default:
		return zerolog.Nop(), fmt.Errorf("invalid log format %q: use json or console", format)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// Stderr is New on os.Stderr; an invalid setting falls back to JSON at info
// and the error is returned so the caller can report it.
func Stderr(format Format, level string) (zerolog.Logger, error) {
	l, err := New(os.Stderr, format, level)
	if err != nil {
		l, _ = New(os.Stderr, JSON, "info")
	}
	return l, err
}

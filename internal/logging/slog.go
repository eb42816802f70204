package logging

import (
	"context"
	"log/slog"

	"github.com/rs/zerolog"
)

// Slog returns a *slog.Logger that writes through l (go-mysql takes one).
// go-mysql's info lines are demoted to debug: they narrate reconnects and
// rotations that the router already reports in its own words.
func Slog(l zerolog.Logger, component string) *slog.Logger {
	return slog.New(&slogHandler{l: l.With().Str("component", component).Logger()})
}

type slogHandler struct {
	l      zerolog.Logger
	prefix string
}

var _ slog.Handler = (*slogHandler)(nil)

func (h *slogHandler) level(l slog.Level) zerolog.Level {
	switch {
	case l >= slog.LevelError:
		return zerolog.ErrorLevel
	case l >= slog.LevelWarn:
		return zerolog.WarnLevel
	default:
		return zerolog.DebugLevel
	}
}

func (h *slogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.l.GetLevel() <= h.level(l)
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	ev := h.l.WithLevel(h.level(r.Level))
	r.Attrs(func(a slog.Attr) bool {
		ev = ev.Interface(h.prefix+a.Key, a.Value.Any())
		return true
	})
	ev.Msg(r.Message)
	return nil
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := h.l.With()
	for _, a := range attrs {
		c = c.Interface(h.prefix+a.Key, a.Value.Any())
	}
	return &slogHandler{l: c.Logger(), prefix: h.prefix}
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	return &slogHandler{l: h.l, prefix: h.prefix + name + "."}
}

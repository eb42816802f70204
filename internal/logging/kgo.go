package logging

import (
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kgo adapts l to franz-go's logger. franz-go's info level is chatty
// (every metadata refresh), so it maps to debug; warnings and errors keep
// their level.
func Kgo(l zerolog.Logger) kgo.Logger {
	return &kgoLogger{l: l.With().Str("component", "kafka").Logger()}
}

type kgoLogger struct{ l zerolog.Logger }

var _ kgo.Logger = (*kgoLogger)(nil)

func (k *kgoLogger) Level() kgo.LogLevel {
	switch k.l.GetLevel() {
	case zerolog.TraceLevel, zerolog.DebugLevel:
		return kgo.LogLevelDebug
	case zerolog.InfoLevel, zerolog.WarnLevel:
		return kgo.LogLevelWarn
	case zerolog.Disabled, zerolog.NoLevel:
		return kgo.LogLevelNone
	default:
		return kgo.LogLevelError
	}
}

func (k *kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var ev *zerolog.Event
	switch level {
	case kgo.LogLevelError:
		ev = k.l.Error()
	case kgo.LogLevelWarn:
		ev = k.l.Warn()
	default:
		ev = k.l.Debug()
	}
	for i := 0; i+1 < len(keyvals); i += 2 {
		if key, ok := keyvals[i].(string); ok {
			ev = ev.Interface(key, keyvals[i+1])
		}
	}
	ev.Msg(msg)
}

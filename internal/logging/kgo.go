package logging

import (
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ConnWarnInterval is the least time between two of franz-go's connection
// warnings for one broker address logged by Kgo; those in between are
// counted and the next one logged says how many ("suppressed").
const ConnWarnInterval = 30 * time.Second

// Kgo adapts l to franz-go's logger. franz-go's info level is chatty
// (every metadata refresh), so it maps to debug; warnings and errors keep
// their level.
//
// While a broker is down franz-go warns at every dial and every
// connection killed before its first answer, several times a second: Kgo
// logs at most one such warning per broker address and message every
// ConnWarnInterval. franz-go ends the message about a connection killed
// before its first answer with "(is SASL missing?)" whenever SASL is not
// configured, also when the broker simply went away: Kgo drops that hint
// and names both causes.
func Kgo(l zerolog.Logger) kgo.Logger {
	return &kgoLogger{l: l.With().Str("component", "kafka").Logger(),
		limit: newConnLimit(ConnWarnInterval, time.Now)}
}

type kgoLogger struct {
	l     zerolog.Logger
	limit *connLimit
}

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

// saslHint is what franz-go appends to a read error on a connection that
// had no answer yet, when no SASL mechanism is configured.
const saslHint = " (is SASL missing?)"

func (k *kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var suppressed int
	if level == kgo.LogLevelWarn && connWarning(msg) {
		var ok bool
		if suppressed, ok = k.limit.allow(msg, addrOf(keyvals)); !ok {
			return
		}
		if m, found := strings.CutSuffix(msg, saslHint); found {
			msg = m + " (the broker went away, or its listener needs SASL or TLS that is not configured)"
		}
	}
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
	if suppressed > 0 {
		ev = ev.Int("suppressed", suppressed)
	}
	ev.Msg(msg)
}

// connWarning reports whether msg is one of franz-go's warnings about a
// connection to a broker that could not be opened or died before its
// first answer.
func connWarning(msg string) bool {
	return strings.HasPrefix(msg, "unable to open connection to broker") ||
		strings.HasPrefix(msg, "read from broker errored")
}

// addrOf returns the "addr" value of franz-go's key-value pairs.
func addrOf(keyvals []any) string {
	for i := 0; i+1 < len(keyvals); i += 2 {
		if keyvals[i] == "addr" {
			if s, ok := keyvals[i+1].(string); ok {
				return s
			}
		}
	}
	return ""
}

// connLimit lets one warning per message and broker address through per
// interval, and counts the others.
type connLimit struct {
	every time.Duration
	now   func() time.Time

	mu   sync.Mutex
	last map[[2]string]*connSeen
}

type connSeen struct {
	at         time.Time
	suppressed int
}

func newConnLimit(every time.Duration, now func() time.Time) *connLimit {
	return &connLimit{every: every, now: now, last: map[[2]string]*connSeen{}}
}

// allow reports whether a warning msg about addr may be logged now and,
// if so, how many were suppressed since the last one logged.
func (c *connLimit) allow(msg, addr string) (suppressed int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]string{msg, addr}
	now := c.now()
	s := c.last[key]
	if s == nil {
		c.last[key] = &connSeen{at: now}
		return 0, true
	}
	if now.Sub(s.at) < c.every {
		s.suppressed++
		return 0, false
	}
	n := s.suppressed
	s.at, s.suppressed = now, 0
	return n, true
}

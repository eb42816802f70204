package metrics

import "sync"

// limiter bounds the distinct values of a label: the first max values are
// kept, later ones become Other. A value once admitted stays admitted, so a
// series never changes its label mid-life.
type limiter struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newLimiter(max int) *limiter {
	return &limiter{max: max, seen: make(map[string]struct{})}
}

// value returns v, or Other when v is new and the limit is reached.
func (l *limiter) value(v string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[v]; ok {
		return v
	}
	if len(l.seen) >= l.max {
		return Other
	}
	l.seen[v] = struct{}{}
	return v
}

package main

import (
	"context"
	"time"
)

// settle waits until the servers are idle (together under 5% of a core
// over half a second), at most maxWait, so that a measurement does not
// share the cores with the previous stage's background work (InnoDB
// flushing pages after a load, the broker dropping topics).
func (e *env) settle(ctx context.Context, maxWait time.Duration) {
	const window = 500 * time.Millisecond
	deadline := time.Now().Add(maxWait)
	began := time.Now()
	for time.Now().Before(deadline) {
		m := newCPUMeter(e.serverPids())
		select {
		case <-time.After(window):
		case <-ctx.Done():
			return
		}
		var used float64
		for _, s := range m.used() {
			used += s
		}
		if used < 0.05*window.Seconds() {
			e.log.Debug().Dur("waited", time.Since(began)).Msg("servers idle")
			return
		}
	}
	e.log.Info().Dur("waited", maxWait).Msg("servers still busy; measuring anyway")
}

package main

import (
	"context"
	"time"
)

// settleIdleCores is the machine-wide CPU use (in cores) under which the
// machine counts as quiet.
const settleIdleCores = 0.25

// settle waits, at most maxWait, until the whole machine is quiet (under
// a quarter of a core busy over a second), so that a measurement does not
// share the cores with the previous stage's background work (InnoDB
// flushing pages after a load, the broker dropping topics) or with other
// processes. Whatever the machine does during the measurement itself is
// reported with it (cpuUse.Foreign).
func (e *env) settle(ctx context.Context, maxWait time.Duration) {
	const window = time.Second
	began := time.Now()
	for {
		before, err := systemBusy()
		if err != nil {
			return
		}
		select {
		case <-time.After(window):
		case <-ctx.Done():
			return
		}
		after, err := systemBusy()
		if err != nil {
			return
		}
		cores := (after - before).Seconds() / window.Seconds()
		if cores < settleIdleCores {
			e.log.Debug().Dur("waited", time.Since(began)).Msg("machine quiet")
			return
		}
		if time.Since(began) >= maxWait {
			e.log.Warn().Float64("busy_cores", cores).Dur("waited", maxWait).
				Msg("machine still busy (other processes?); measuring anyway, see others_cores in the results")
			return
		}
	}
}

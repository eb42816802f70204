package inbox

import (
	"math/rand/v2"
	"time"
)

// backoff is the wait after failed attempt n (1-based): initial·2^(n-1)
// capped at max, of which the upper half is random ("equal jitter"), so
// consumers failing together do not retry together.
func backoff(initial, max time.Duration, n int) time.Duration {
	d := initial
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

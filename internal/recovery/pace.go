package recovery

import (
	"context"
	"time"
)

// pacer holds a recovery's reads to Config.Rate rows per second, counted
// from the first chunk: a chunk is at most Rate rows, and after each one
// the next waits until the rows read so far are due. The snapshot
// transaction stays open meanwhile: a low rate lengthens the time the
// server keeps the undo history of the rows changed since.
type pacer struct {
	rate  int // rows per second; 0: no cap
	start time.Time
}

func newPacer(rate int) *pacer { return &pacer{rate: rate, start: time.Now()} }

// chunk is the rows a query reads: at most a second's worth.
func (p *pacer) chunk(n int) int {
	if p.rate > 0 && p.rate < n {
		return p.rate
	}
	return n
}

// due is how long to wait before reading past rows rows: zero when
// there is no cap or the reads are behind it.
func (p *pacer) due(rows int64) time.Duration {
	if p.rate <= 0 {
		return 0
	}
	at := p.start.Add(time.Duration(float64(rows) / float64(p.rate) * float64(time.Second)))
	return max(time.Until(at), 0)
}

// wait sleeps for d, or until ctx ends (its error).
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

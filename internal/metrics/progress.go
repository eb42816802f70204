package metrics

import (
	"context"
	"math"
	"time"

	"github.com/rs/zerolog"
)

// ProgressConfig configures a Progress. Zero values take the defaults.
type ProgressConfig struct {
	// Every is the interval between progress lines. Default
	// DefaultProgressEvery.
	Every time.Duration
	// MinLag is the lag above which progress is logged. Default
	// DefaultProgressMinLag.
	MinLag time.Duration
}

// The defaults of ProgressConfig.
const (
	DefaultProgressEvery  = 10 * time.Second
	DefaultProgressMinLag = 10 * time.Second
)

// setDefaults sets every field left zero to its default.
func (c *ProgressConfig) setDefaults() {
	if c.Every <= 0 {
		c.Every = DefaultProgressEvery
	}
	if c.MinLag <= 0 {
		c.MinLag = DefaultProgressMinLag
	}
}

// Progress logs one line per interval while the relay is catching up:
// position (checkpoint GTID set), routing rate, lag, and the estimated time
// to catch up; and one line when it has caught up. It reads Metrics and
// costs the relay nothing.
type Progress struct {
	m   *Metrics
	log zerolog.Logger
	cfg ProgressConfig

	prev     Snapshot
	havePrev bool
	lagging  bool
	since    time.Time // when the current catch-up was first logged
}

// NewProgress returns a Progress over m logging to log.
func NewProgress(m *Metrics, log zerolog.Logger, cfg ProgressConfig) *Progress {
	cfg.setDefaults()
	return &Progress{m: m, log: log.With().Str("component", "progress").Logger(), cfg: cfg}
}

// Run calls Tick every cfg.Every until ctx ends, then returns nil.
func (p *Progress) Run(ctx context.Context) error {
	t := time.NewTicker(p.cfg.Every)
	defer t.Stop()
	p.Tick()
	for {
		select {
		case <-t.C:
			p.Tick()
		case <-ctx.Done():
			return nil
		}
	}
}

// Tick takes a sample and logs if lagging; the first call only takes the
// baseline. Run calls it; a loop with its own ticker may call it instead.
// Not safe for concurrent use.
func (p *Progress) Tick() {
	s := p.m.Snapshot()
	prev, ok := p.prev, p.havePrev
	p.prev, p.havePrev = s, true
	if !ok {
		return
	}
	dt := s.Time.Sub(prev.Time).Seconds()
	if dt <= 0 {
		return
	}
	lagging := s.Lag > p.cfg.MinLag
	switch {
	case lagging:
		if !p.lagging {
			p.since = s.Time
		}
		ev := p.log.Info().
			Str("gtid_set", s.GTIDSet).
			Float64("events_per_sec", round1(float64(s.Events-prev.Events)/dt)).
			Float64("transactions_per_sec", round1(float64(s.Transactions-prev.Transactions)/dt)).
			Float64("lag_seconds", round1(s.Lag.Seconds()))
		// Lag shrinks by (catch-up speed - 1) seconds per second.
		if shrink := (prev.Lag - s.Lag).Seconds() / dt; prev.Lag > 0 && shrink > 0 {
			eta := time.Duration(s.Lag.Seconds() / shrink * float64(time.Second))
			ev = ev.Str("eta", eta.Round(time.Second).String()).Float64("eta_seconds", math.Round(eta.Seconds()))
		} else {
			ev = ev.Str("eta", "unknown")
		}
		ev.Msg("catching up")
	case p.lagging:
		p.log.Info().Str("gtid_set", s.GTIDSet).Float64("lag_seconds", round1(s.Lag.Seconds())).
			Str("took", round(s.Time.Sub(p.since)).String()).Msg("caught up")
	}
	p.lagging = lagging
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

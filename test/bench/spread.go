package main

import (
	"slices"
)

// spread summarises repeated runs of one measurement. On a machine shared
// with other work a run can only be slowed down, never sped up, so the
// table reports the best run's rate and shows the median beside it.
type spread struct {
	Runs              int     `json:"runs"`
	BestRate          float64 `json:"best_rate"`
	MedianRate        float64 `json:"median_rate"`
	MedianStartupSecs float64 `json:"median_startup_seconds,omitempty"`
	MaxStartupSecs    float64 `json:"max_startup_seconds,omitempty"`
	MaxPeakRSSBytes   int64   `json:"max_peak_rss_bytes,omitempty"`
	MedianCPUPer100k  float64 `json:"median_cpu_seconds_per_100k_events,omitempty"`
	AllVerified       bool    `json:"all_verified,omitempty"`
}

// Keys of results.Spread.
const (
	spreadRawRead          = "raw_read"
	spreadRawDecode        = "raw_decode"
	spreadRawIdempotent    = "raw_produce_idempotent"
	spreadRawTransactional = "raw_produce_transactional"
	spreadExactlyOnce      = "router_exactly_once"
	spreadAtLeastOnce      = "router_at_least_once"
)

// pickBest sets the reported results to the fastest run of each
// measurement and fills Spread.
func (r *results) pickBest() {
	r.Spread = map[string]spread{}
	if i, sp := best(r.RawReadRuns, func(d rawReadResult) float64 { return d.RowsPerSec }); i >= 0 {
		r.RawRead, r.Spread[spreadRawRead] = &r.RawReadRuns[i], sp
	}
	if i, sp := best(r.RawDecodeRuns, func(d rawDecodeResult) float64 { return d.RowsPerSec }); i >= 0 {
		r.RawDecode, r.Spread[spreadRawDecode] = &r.RawDecodeRuns[i], sp
	}
	rate := func(p rawProduceResult) float64 { return p.RecordsPerSec }
	if i, sp := best(r.RawIdempotentRuns, rate); i >= 0 {
		r.RawIdempotent, r.Spread[spreadRawIdempotent] = &r.RawIdempotentRuns[i], sp
	}
	if i, sp := best(r.RawTransactionalRuns, rate); i >= 0 {
		r.RawTransactional, r.Spread[spreadRawTransactional] = &r.RawTransactionalRuns[i], sp
	}
	if i, sp := bestCatchup(r.ExactlyOnceRuns); i >= 0 {
		r.ExactlyOnce, r.Spread[spreadExactlyOnce] = &r.ExactlyOnceRuns[i], sp
	}
	if i, sp := bestCatchup(r.AtLeastOnceRuns); i >= 0 {
		r.AtLeastOnce, r.Spread[spreadAtLeastOnce] = &r.AtLeastOnceRuns[i], sp
	}
}

// best returns the index of the run with the highest rate, or -1.
func best[T any](runs []T, rate func(T) float64) (int, spread) {
	if len(runs) == 0 {
		return -1, spread{}
	}
	bi := 0
	rates := make([]float64, len(runs))
	for i, r := range runs {
		rates[i] = rate(r)
		if rates[i] > rates[bi] {
			bi = i
		}
	}
	return bi, spread{Runs: len(runs), BestRate: rates[bi], MedianRate: median(rates)}
}

func bestCatchup(runs []catchupResult) (int, spread) {
	i, sp := best(runs, func(c catchupResult) float64 { return c.EventsPerSec })
	if i < 0 {
		return i, sp
	}
	startups := make([]float64, len(runs))
	cpus := make([]float64, len(runs))
	sp.AllVerified = true
	for j, c := range runs {
		startups[j], cpus[j] = c.StartupSecs, c.CPUPer100k
		sp.MaxPeakRSSBytes = max(sp.MaxPeakRSSBytes, c.PeakRSSBytes)
		sp.MaxStartupSecs = max(sp.MaxStartupSecs, c.StartupSecs)
		sp.AllVerified = sp.AllVerified && c.Verified.OK
	}
	sp.MedianStartupSecs, sp.MedianCPUPer100k = median(startups), median(cpus)
	return i, sp
}

// median of vs (the lower one of the middle two for an even count, so
// that two runs do not report the best as the median).
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

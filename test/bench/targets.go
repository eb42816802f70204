package main

import "fmt"

// target is one goal from the issue and whether this run met it.
type target struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Op    string  `json:"op"` // ">=", "<=" or "<"
	Limit float64 `json:"limit"`
	Unit  string  `json:"unit"`
	Pass  bool    `json:"pass"`
}

func (t target) String() string {
	return fmt.Sprintf("%s %s %s", t.Op, trimFloat(t.Limit), t.Unit)
}

func newTarget(name string, value float64, op string, limit float64, unit string) target {
	t := target{Name: name, Value: value, Op: op, Limit: limit, Unit: unit}
	switch op {
	case ">=":
		t.Pass = value >= limit
	case "<=":
		t.Pass = value <= limit
	case "<":
		t.Pass = value < limit
	}
	return t
}

// The targets of the issue.
const (
	targetEOSRatio   = 0.8
	targetALORatio   = 0.9
	targetPeakRSSMB  = 100
	targetStartupSec = 1
)

// targetP99Ms are the p99 latency goals by insert rate.
var targetP99Ms = map[int]float64{1000: 20, 10000: 50}

// ratios of the router to the raw limits.
type ratios struct {
	EOS, ALO             float64
	EOSRef, ALORef       float64 // min(raw decode, raw produce) used
	EOSMedian, ALOMedian float64 // the same ratios of the median runs, when repeated
	HaveEOS, HaveALO     bool
}

func (r *results) ratios() ratios {
	var out ratios
	if r.RawDecode == nil {
		return out
	}
	if r.ExactlyOnce != nil && r.RawTransactional != nil {
		out.EOSRef = min(r.RawDecode.RowsPerSec, r.RawTransactional.RecordsPerSec)
		out.EOS, out.HaveEOS = r.ExactlyOnce.EventsPerSec/out.EOSRef, true
		out.EOSMedian = r.medianRatio(spreadExactlyOnce, spreadRawTransactional)
	}
	if r.AtLeastOnce != nil && r.RawIdempotent != nil {
		out.ALORef = min(r.RawDecode.RowsPerSec, r.RawIdempotent.RecordsPerSec)
		out.ALO, out.HaveALO = r.AtLeastOnce.EventsPerSec/out.ALORef, true
		out.ALOMedian = r.medianRatio(spreadAtLeastOnce, spreadRawIdempotent)
	}
	return out
}

// medianRatio is the median rate of router runs over the smaller median
// rate of raw decode and raw produce, or 0 without repeated runs.
func (r *results) medianRatio(router, produce string) float64 {
	rt, dec, prod := r.Spread[router], r.Spread[spreadRawDecode], r.Spread[produce]
	if rt.Runs < 2 || dec.Runs < 2 || prod.Runs < 2 {
		return 0
	}
	return rt.MedianRate / min(dec.MedianRate, prod.MedianRate)
}

// evaluate fills r.Targets from the measurements present.
func (r *results) evaluate() {
	r.Targets = nil
	add := func(t target) { r.Targets = append(r.Targets, t) }
	rt := r.ratios()
	if rt.HaveEOS {
		add(newTarget("exactly-once throughput / min(raw decode, raw transactional produce)", rt.EOS, ">=", targetEOSRatio, ""))
	}
	if rt.HaveALO {
		add(newTarget("at-least-once throughput / min(raw decode, raw idempotent produce)", rt.ALO, ">=", targetALORatio, ""))
	}
	for _, k := range []string{spreadExactlyOnce, spreadAtLeastOnce} {
		c := r.catchup(k)
		if c == nil {
			continue
		}
		sp := r.Spread[k]
		add(newTarget(c.Label+": startup to first record (median)", sp.MedianStartupSecs, "<", targetStartupSec, "s"))
		add(newTarget(c.Label+": peak RSS (max)", mb(sp.MaxPeakRSSBytes), "<=", targetPeakRSSMB, "MB"))
	}
	if r.Live != nil {
		for _, l := range r.Live.Rates {
			if limit, ok := targetP99Ms[l.TargetRate]; ok {
				add(newTarget(fmt.Sprintf("live %d/s: p99 latency", l.TargetRate), l.Latency.P99Ms, "<=", limit, "ms"))
			}
		}
		add(newTarget("live router: peak RSS", mb(r.Live.PeakRSSBytes), "<=", targetPeakRSSMB, "MB"))
	}
	for _, s := range r.Stress {
		add(newTarget("stress, "+s.Label+": peak RSS", mb(s.PeakRSSBytes), "<=", targetPeakRSSMB, "MB"))
	}
}

func mb(b int64) float64 { return float64(b) / 1e6 }

// catchup returns the reported catch-up of a spread key.
func (r *results) catchup(key string) *catchupResult {
	switch key {
	case spreadExactlyOnce:
		return r.ExactlyOnce
	case spreadAtLeastOnce:
		return r.AtLeastOnce
	}
	return nil
}

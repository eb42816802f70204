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

// The targets. Those on Apache Kafka are its issue's: a warm node with
// its default settings, the broker users run.
const (
	targetEOSRatio       = 0.8
	targetALORatio       = 0.9 // kfake
	targetALORatioApache = 0.8
	targetPeakRSSMB      = 100
	targetStartupSec     = 1
	targetCPUPer100k     = 0.30 // router CPU per 100,000 events, Apache Kafka
	// The router's catch-up over Debezium's, events/s after the first
	// record: exactly-once against Debezium tuned with exactly-once
	// support, at-least-once against Debezium tuned.
	targetDbzEOS = 10
	targetDbzALO = 8
)

// liveTarget is a live latency goal at one insert rate; 0 is none.
type liveTarget struct{ P50Ms, P99Ms float64 }

// liveTargets are the live latency goals by delivery mode, broker and
// insert rate.
var liveTargets = map[string]map[string]map[int]liveTarget{
	"exactly-once": {
		kafkaKfake:  {1000: {P99Ms: 20}, 10000: {P99Ms: 50}},
		kafkaApache: {1000: {P50Ms: 10, P99Ms: 25}, 10000: {P50Ms: 10, P99Ms: 25}},
	},
	"at-least-once": {
		kafkaApache: {1000: {P99Ms: 10}},
	},
}

// liveTargetName names a live latency target.
func liveTargetName(delivery string, rate int, pct string) string {
	if delivery == "exactly-once" {
		return fmt.Sprintf("live %d/s: %s latency", rate, pct)
	}
	return fmt.Sprintf("live %s %d/s: %s latency", delivery, rate, pct)
}

// liveStageName names a live stage's peak RSS target.
func liveStageName(l *liveStage) string {
	if l.Delivery == "exactly-once" {
		return "live router: peak RSS"
	}
	return "live router " + l.Delivery + ": peak RSS"
}

// dbzTargets are the router/Debezium catch-up goals by the router's
// delivery and Debezium's setup.
var dbzTargets = []struct {
	Delivery, Setup string
	Limit           float64
}{
	{"exactly-once", "tuned, exactly-once", targetDbzEOS},
	{"at-least-once", "tuned", targetDbzALO},
}

// dbzTarget is the catch-up goal of the router in delivery against
// Debezium's setup, if there is one.
func dbzTarget(delivery, setup string) (target, bool) {
	for _, t := range dbzTargets {
		if t.Delivery == delivery && t.Setup == setup {
			return target{Name: fmt.Sprintf("router %s / Debezium %s: events/s after the first record", delivery, setup),
				Op: ">=", Limit: t.Limit, Unit: "x"}, true
		}
	}
	return target{}, false
}

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
		limit := targetALORatio
		if r.Options.Kafka == kafkaApache {
			limit = targetALORatioApache
		}
		add(newTarget("at-least-once throughput / min(raw decode, raw idempotent produce)", rt.ALO, ">=", limit, ""))
	}
	for _, k := range []string{spreadExactlyOnce, spreadAtLeastOnce} {
		c := r.catchup(k)
		if c == nil {
			continue
		}
		sp := r.Spread[k]
		add(newTarget(c.Label+": startup to first record (median)", sp.MedianStartupSecs, "<", targetStartupSec, "s"))
		if r.Options.Kafka == kafkaApache {
			add(newTarget(c.Label+": CPU per 100k events (median)", sp.MedianCPUPer100k, "<=", targetCPUPer100k, "s"))
		}
		add(newTarget(c.Label+": peak RSS (max)", mb(sp.MaxPeakRSSBytes), "<=", targetPeakRSSMB, "MB"))
	}
	for _, st := range []*liveStage{r.Live, r.LiveAtLeastOnce} {
		if st == nil {
			continue
		}
		for _, l := range st.Rates {
			t := liveTargets[st.Delivery][r.Options.Kafka][l.TargetRate]
			if t.P50Ms > 0 {
				add(newTarget(liveTargetName(st.Delivery, l.TargetRate, "p50"), l.Latency.P50Ms, "<=", t.P50Ms, "ms"))
			}
			if t.P99Ms > 0 {
				add(newTarget(liveTargetName(st.Delivery, l.TargetRate, "p99"), l.Latency.P99Ms, "<=", t.P99Ms, "ms"))
			}
		}
		add(newTarget(liveStageName(st), mb(st.PeakRSSBytes), "<=", targetPeakRSSMB, "MB"))
	}
	for _, s := range r.Stress {
		add(newTarget("stress, "+s.Label+": peak RSS", mb(s.PeakRSSBytes), "<=", targetPeakRSSMB, "MB"))
	}
	if d := r.Debezium; d != nil {
		for _, t := range dbzTargets {
			rc, dc := d.router(t.Delivery), d.catchup(t.Setup)
			if rc == nil || dc == nil || dc.SteadyEventsPerSec == 0 {
				continue
			}
			goal, _ := dbzTarget(t.Delivery, t.Setup)
			add(newTarget(goal.Name, rc.SteadyEventsPerSec/dc.SteadyEventsPerSec, goal.Op, goal.Limit, goal.Unit))
		}
		for _, rc := range d.Router {
			add(newTarget(rc.Label+": peak RSS", mb(rc.PeakRSSBytes), "<=", targetPeakRSSMB, "MB"))
		}
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

package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// dbzStage is what the Debezium stage measured.
type dbzStage struct {
	Kafka    string     `json:"kafka"`    // Apache Kafka version of the node both ran on
	Connect  string     `json:"connect"`  // Kafka Connect runtime version
	Debezium string     `json:"debezium"` // Debezium release (MariaDB connector)
	Setups   []dbzSetup `json:"setups"`
	// Router holds the router's fastest catch-up on the same node in each
	// delivery mode, exactly-once first, of RouterRuns; Catchups the
	// fastest of each setup, in Setups' order, of CatchupRuns (pickBest).
	Router      []catchupResult `json:"router_catchups"`
	Catchups    []dbzCatchup    `json:"debezium_catchups"`
	RouterRuns  []catchupResult `json:"router_catchup_runs,omitempty"`
	CatchupRuns []dbzCatchup    `json:"debezium_catchup_runs,omitempty"`
	RouterLive  *liveStage      `json:"router_live,omitempty"`
	Live        []dbzLive       `json:"debezium_live,omitempty"`
	Ratios      []dbzRatio      `json:"ratios"`
}

// dbzRatio is one figure of both, and router/Debezium.
type dbzRatio struct {
	Figure   string  `json:"figure"`
	Unit     string  `json:"unit"`
	Router   float64 `json:"router"`
	Debezium float64 `json:"debezium"`
	Ratio    float64 `json:"router_over_debezium"`
}

// pickBest sets Router and Catchups to the fastest run (events/s from
// process start) of each delivery mode and setup.
func (st *dbzStage) pickBest() {
	st.Router, st.Catchups = nil, nil
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		if c, ok := fastest(st.RouterRuns, func(c catchupResult) bool { return c.Delivery == delivery },
			func(c catchupResult) float64 { return c.EventsPerSec }); ok {
			st.Router = append(st.Router, c)
		}
	}
	for _, s := range st.Setups {
		if c, ok := fastest(st.CatchupRuns, func(c dbzCatchup) bool { return c.Setup == s.Name },
			func(c dbzCatchup) float64 { return c.EventsPerSec }); ok {
			st.Catchups = append(st.Catchups, c)
		}
	}
}

// fastest returns the run with the highest rate of those that match.
func fastest[T any](runs []T, match func(T) bool, rate func(T) float64) (T, bool) {
	var out T
	found := false
	for _, r := range runs {
		if match(r) && (!found || rate(r) > rate(out)) {
			out, found = r, true
		}
	}
	return out, found
}

// count is how many of runs match.
func count[T any](runs []T, match func(T) bool) (n int) {
	for _, r := range runs {
		if match(r) {
			n++
		}
	}
	return n
}

func (st *dbzStage) catchup(setup string) *dbzCatchup {
	for i := range st.Catchups {
		if st.Catchups[i].Setup == setup {
			return &st.Catchups[i]
		}
	}
	return nil
}

func (st *dbzStage) router(delivery string) *catchupResult {
	for i := range st.Router {
		if st.Router[i].Delivery == delivery {
			return &st.Router[i]
		}
	}
	return nil
}

func (st *dbzStage) live(setup string) *dbzLive {
	for i := range st.Live {
		if st.Live[i].Setup == setup {
			return &st.Live[i]
		}
	}
	return nil
}

// computeRatios fills Ratios: the router's exactly-once catch-up against
// Debezium tuned with exactly-once support, its at-least-once catch-up
// against Debezium tuned and with its defaults, and its live latencies
// against each Debezium live setup at the same rate.
func (st *dbzStage) computeRatios() {
	st.Ratios = nil
	add := func(figure, unit string, router, dbz float64) {
		r := dbzRatio{Figure: figure, Unit: unit, Router: router, Debezium: dbz}
		if dbz != 0 {
			r.Ratio = router / dbz
		}
		st.Ratios = append(st.Ratios, r)
	}
	for _, pair := range []struct{ delivery, setup string }{
		{"exactly-once", "tuned, exactly-once"}, {"at-least-once", "tuned"}, {"at-least-once", "defaults"},
	} {
		r, d := st.router(pair.delivery), st.catchup(pair.setup)
		if r == nil || d == nil {
			continue
		}
		what := fmt.Sprintf("catch-up, router %s vs Debezium %s: ", pair.delivery, pair.setup)
		add(what+"events/s", "events/s", r.EventsPerSec, d.EventsPerSec)
		add(what+"events/s after the first record", "events/s", r.SteadyEventsPerSec, d.SteadyEventsPerSec)
		add(what+"CPU per 100k events", "s", r.CPUPer100k, d.CPUPer100k)
		add(what+"CPU per 100k events after the first record (router: whole process)", "s", r.CPUPer100k, d.SteadyCPUPer100k)
		add(what+"peak RSS", "MB", mb(r.PeakRSSBytes), mb(d.PeakRSSBytes))
		add(what+"start to first record", "s", r.StartupSecs, d.StartupSecs)
	}
	if st.RouterLive == nil {
		return
	}
	for _, l := range st.Live {
		for _, d := range l.Rates {
			var r *liveResult
			for i := range st.RouterLive.Rates {
				if st.RouterLive.Rates[i].TargetRate == d.TargetRate {
					r = &st.RouterLive.Rates[i]
				}
			}
			if r == nil {
				continue
			}
			what := fmt.Sprintf("live %s/s, router exactly-once vs Debezium %s: latency ", thousands(float64(d.TargetRate)), l.Setup)
			add(what+"p50", "ms", r.Latency.P50Ms, d.Latency.P50Ms)
			add(what+"p99", "ms", r.Latency.P99Ms, d.Latency.P99Ms)
			add(what+"max", "ms", r.Latency.MaxMs, d.Latency.MaxMs)
		}
	}
}

// print writes the stage as a side-by-side table.
func (st *dbzStage) print(w io.Writer) error {
	st.computeRatios()
	fmt.Fprintf(w, "\nDebezium side by side: Debezium %s (MariaDB connector, Outbox Event Router) on Kafka Connect %s, and the router, on one Apache Kafka %s node\n",
		st.Debezium, st.Connect, st.Kafka)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\trouter\tDebezium\trouter/Debezium")
	fmt.Fprintln(tw, "-----------\t------\t--------\t---------------")
	row := func(name, unit string, r, d float64) {
		ratio := "-"
		if d != 0 {
			ratio = f2(r / d)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, num(r)+unit, num(d)+unit, ratio)
	}
	for _, pair := range []struct{ delivery, setup string }{
		{"exactly-once", "tuned, exactly-once"}, {"at-least-once", "tuned"}, {"at-least-once", "defaults"},
	} {
		r, d := st.router(pair.delivery), st.catchup(pair.setup)
		if r == nil || d == nil {
			continue
		}
		fmt.Fprintf(tw, "catch-up of %s events: router %s, Debezium %s%s\t\t\t\n", thousands(float64(d.Events)), pair.delivery, pair.setup,
			bestOfNote(count(st.RouterRuns, func(c catchupResult) bool { return c.Delivery == pair.delivery }),
				count(st.CatchupRuns, func(c dbzCatchup) bool { return c.Setup == pair.setup })))
		row("  events/s (from process start)", "", r.EventsPerSec, d.EventsPerSec)
		row("  events/s after the first record", "", r.SteadyEventsPerSec, d.SteadyEventsPerSec)
		if t, ok := dbzTarget(pair.delivery, pair.setup); ok && d.SteadyEventsPerSec != 0 {
			t = newTarget(t.Name, r.SteadyEventsPerSec/d.SteadyEventsPerSec, t.Op, t.Limit, t.Unit)
			fmt.Fprintf(tw, "    target: router/Debezium %s\t\t\t%s\n", t, passFail(t.Pass))
		}
		row("  CPU per 100k events (JVM included)", " s", r.CPUPer100k, d.CPUPer100k)
		row("  CPU per 100k events after the first record", " s", r.CPUPer100k, d.SteadyCPUPer100k)
		row("  peak RSS", " MB", mb(r.PeakRSSBytes), mb(d.PeakRSSBytes))
		row("  start to first record", " s", r.StartupSecs, d.StartupSecs)
		fmt.Fprintf(tw, "  records in Kafka (read_committed)\t%s\t%s\t\n", r.Verified, d.Verified)
	}
	if st.RouterLive != nil {
		for _, l := range st.Live {
			for _, d := range l.Rates {
				for _, r := range st.RouterLive.Rates {
					if r.TargetRate != d.TargetRate {
						continue
					}
					fmt.Fprintf(tw, "live %s/s: router exactly-once, Debezium %s (achieved %s/s and %s/s)\t\t\t\n",
						thousands(float64(d.TargetRate)), l.Setup, thousands(r.AchievedRate), thousands(d.AchievedRate))
					row("  latency p50", " ms", r.Latency.P50Ms, d.Latency.P50Ms)
					row("  latency p99", " ms", r.Latency.P99Ms, d.Latency.P99Ms)
					row("  latency max", " ms", r.Latency.MaxMs, d.Latency.MaxMs)
					fmt.Fprintf(tw, "  not received\t%d\t%d\t\n", r.Lost, d.Lost)
				}
			}
			fmt.Fprintf(tw, "live, Debezium %s: records in Kafka (read_committed)\t%s\t%s\t\n", l.Setup, st.RouterLive.Verified, l.Verified)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range st.Setups {
		fmt.Fprintf(w, "Debezium %q: worker %s; connector %s\n", s.Name, settings(s.Worker), settings(s.Connector))
	}
	return nil
}

// num prints a figure with a precision that suits its size.
func num(v float64) string {
	switch {
	case v >= 1000:
		return thousands(v)
	case v >= 10:
		return f1(v)
	}
	return f2(v)
}

func settings(m map[string]string) string {
	if len(m) == 0 {
		return "as in examples/debezium"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

// bestOfNote says how many runs each side's fastest was picked from.
func bestOfNote(router, dbz int) string {
	if router < 2 && dbz < 2 {
		return ""
	}
	return fmt.Sprintf(" (fastest of %d and of %d runs)", router, dbz)
}

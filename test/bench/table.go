package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"
)

// tableRow is one line of the printed table: a measurement, its value, and
// the target it is held to (if any).
type tableRow struct {
	name, value, target, result string
}

// printTable writes the results as one aligned plain-text table.
func (r *results) printTable(w io.Writer) error {
	var rows []tableRow
	cpuLabel := "  CPU s: router / " + r.Machine.brokerCPU() + " / mariadbd / bench"
	add := func(name, value string) { rows = append(rows, tableRow{name: name, value: value}) }
	check := func(name, value string, t target) {
		rows = append(rows, tableRow{name, value, t.String(), passFail(t.Pass)})
	}
	find := func(name string) (target, bool) {
		for _, t := range r.Targets {
			if t.Name == name {
				return t, true
			}
		}
		return target{}, false
	}
	checkOrAdd := func(tname, name, value string) {
		if t, ok := find(tname); ok {
			check(name, value, t)
		} else {
			add(name, value)
		}
	}
	verified := func(name string, v verification) {
		rows = append(rows, tableRow{name, v.String(), "exactly once each", passFail(v.OK)})
	}

	if b := r.Backlog; b != nil {
		add("backlog: outbox rows", fmt.Sprintf("%s in %s txns (+%s other-table txns)",
			thousands(float64(b.Rows)), thousands(float64(b.OutboxTxns)), thousands(float64(b.OtherTxns))))
		add("backlog: payload", fmt.Sprintf("%s MB, mean %s B", f1(float64(b.PayloadBytes)/1e6), thousands(b.MeanPayloadBytes)))
		add("backlog: load time", fmt.Sprintf("%s s (%s rows/s)", f1(b.LoadSeconds), thousands(b.LoadRowsPerSec)))
	}
	if d := r.RawRead; d != nil {
		add("raw read (go-mysql raw mode, no parsing)", fmt.Sprintf("%s rows/s, %s MB/s%s%s", thousands(d.RowsPerSec), f1(d.MBPerSec),
			r.spreadNote(spreadRawRead), othersNote(d.CPU)))
		add("  client CPU per 100k rows", f2(per100k(d.CPU.Bench, d.Rows))+" s")
	}
	if d := r.RawDecode; d != nil {
		add("raw decode (go-mysql BinlogSyncer)", thousands(d.RowsPerSec)+" rows/s"+r.spreadNote(spreadRawDecode)+othersNote(d.CPU))
		add("  client CPU per 100k rows", f2(per100k(d.CPU.Bench, d.Rows))+" s")
	}
	if p := r.RawIdempotent; p != nil {
		add("raw produce, idempotent acks=all", thousands(p.RecordsPerSec)+" rec/s"+r.spreadNote(spreadRawIdempotent)+othersNote(p.CPU))
		add("  client CPU per 100k records", f2(per100k(p.CPU.Bench, p.Records))+" s")
	}
	if p := r.RawTransactional; p != nil {
		add(fmt.Sprintf("raw produce, transactional (commit per %s)", thousands(float64(p.CommitEvery))),
			thousands(p.RecordsPerSec)+" rec/s"+r.spreadNote(spreadRawTransactional)+othersNote(p.CPU))
		add("  client CPU per 100k records", f2(per100k(p.CPU.Bench, p.Records))+" s")
	}
	rt := r.ratios()
	for _, k := range []string{spreadExactlyOnce, spreadAtLeastOnce} {
		c := r.catchup(k)
		if c == nil {
			continue
		}
		sp := r.Spread[k]
		add(c.Label+": throughput", fmt.Sprintf("%s ev/s, %s MB/s (%s s wall)%s", thousands(c.EventsPerSec), f1(c.MBPerSec),
			f2(c.WallSeconds), r.spreadNote(k)))
		switch {
		case k == spreadExactlyOnce && rt.HaveEOS:
			checkOrAdd("exactly-once throughput / min(raw decode, raw transactional produce)",
				"  ratio to min(raw decode, raw txn produce)", f2(rt.EOS)+medianRatioNote(rt.EOSMedian))
		case k == spreadAtLeastOnce && rt.HaveALO:
			checkOrAdd("at-least-once throughput / min(raw decode, raw idempotent produce)",
				"  ratio to min(raw decode, raw idem. produce)", f2(rt.ALO)+medianRatioNote(rt.ALOMedian))
		}
		add("  throughput after first record", thousands(c.SteadyEventsPerSec)+" ev/s")
		startup := f2(sp.MedianStartupSecs) + " s"
		if sp.Runs > 1 {
			startup = fmt.Sprintf("median %s s, max %s s", f2(sp.MedianStartupSecs), f2(sp.MaxStartupSecs))
		}
		checkOrAdd(c.Label+": startup to first record (median)", "  startup to first record", startup)
		checkOrAdd(c.Label+": CPU per 100k events (median)", "  CPU per 100k events", f2(sp.MedianCPUPer100k)+" s"+map[bool]string{true: " (median)"}[sp.Runs > 1])
		checkOrAdd(c.Label+": peak RSS (max)", "  peak RSS", f1(mb(sp.MaxPeakRSSBytes))+" MB"+map[bool]string{true: " (max of runs)"}[sp.Runs > 1])
		add(cpuLabel, cpuSplit(c.CPU))
		add("  other processes on the machine", f2(c.CPU.ForeignC)+" cores")
		for i, run := range r.catchupRuns(k) {
			name := "  records in Kafka (read_committed)"
			if sp.Runs > 1 {
				name = fmt.Sprintf("  records in Kafka (read_committed), run %d", i+1)
			}
			verified(name, run.Verified)
		}
	}
	for _, l := range []*liveStage{r.Live, r.LiveAtLeastOnce} {
		if l == nil {
			continue
		}
		mode := ""
		if l.Delivery != "exactly-once" {
			mode = l.Delivery + " "
		}
		for _, x := range l.Rates {
			add(fmt.Sprintf("live %s%s/s: achieved insert rate", mode, thousands(float64(x.TargetRate))),
				fmt.Sprintf("%s/s (%d missed, %d failed, %d not received)", thousands(x.AchievedRate), x.Missed, x.Failed, x.Lost))
			checkOrAdd(liveTargetName(l.Delivery, x.TargetRate, "p50"), "  latency p50", f1(x.Latency.P50Ms)+" ms")
			checkOrAdd(liveTargetName(l.Delivery, x.TargetRate, "p99"), "  latency p99", f1(x.Latency.P99Ms)+" ms")
			add("  latency p99.9 / max", fmt.Sprintf("%s / %s ms", f1(x.Latency.P999Ms), f1(x.Latency.MaxMs)))
			add("  INSERT round trip p50 / p99", fmt.Sprintf("%s / %s ms", f1(x.InsertTime.P50Ms), f1(x.InsertTime.P99Ms)))
			add(cpuLabel, cpuSplit(x.CPU))
			add("  other processes on the machine", f2(x.CPU.ForeignC)+" cores")
		}
		checkOrAdd(liveStageName(l), liveStageName(l), f1(mb(l.PeakRSSBytes))+" MB")
		verified(strings.TrimSpace("live "+mode)+": records in Kafka (read_committed)", l.Verified)
	}
	for _, b := range r.Broker {
		add(fmt.Sprintf("broker alone, %s, %s/s", b.Mode.Label, thousands(float64(b.TargetRate))),
			fmt.Sprintf("%d of %d received, %d transactions", b.Received, b.Produced, b.Transactions))
		add("  latency p50 / p99 / p99.9 / max", fmt.Sprintf("%s / %s / %s / %s ms", f1(b.Latency.P50Ms), f1(b.Latency.P99Ms), f1(b.Latency.P999Ms), f1(b.Latency.MaxMs)))
		if b.CPU.Seconds > 0 {
			add(cpuLabel, cpuSplit(b.CPU))
		}
	}
	for _, s := range r.Stress {
		add("stress, "+s.Label+": throughput", fmt.Sprintf("%s ev/s, %s MB/s (%s s wall)", thousands(s.EventsPerSec), f1(s.MBPerSec), f2(s.WallSeconds)))
		checkOrAdd("stress, "+s.Label+": peak RSS", "  peak RSS", f1(mb(s.PeakRSSBytes))+" MB")
		verified("  records in Kafka (read_committed)", s.Verified)
	}

	m := r.Machine
	fmt.Fprintf(w, "binlog-router benchmark, %s%s\n", r.Time.UTC().Format("2006-01-02 15:04 UTC"), map[bool]string{true: " (quick)"}[r.Quick])
	fmt.Fprintf(w, "machine: %d x %s, %.1f GiB; MariaDB %s; %s; %s; router tree %s\n",
		m.CPUs, m.CPUModel, m.MemoryGiB, m.MariaDB, m.Go, m.kafka(), orUnknown(m.Revision))
	if m.RouterArgs != "" || m.RouterEnv != "" {
		fmt.Fprintf(w, "router started with extra flags %q, environment %q\n", m.RouterArgs, m.RouterEnv)
	}
	if m.KafkaProps != "" {
		fmt.Fprintf(w, "Apache Kafka started with extra properties %q\n", m.KafkaProps)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measurement\tvalue\ttarget\tresult")
	fmt.Fprintln(tw, "-----------\t-----\t------\t------")
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row.name, row.value, row.target, row.result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Debezium != nil {
		if err := r.Debezium.print(w); err != nil {
			return err
		}
	}
	pass, fail := 0, 0
	for _, t := range r.Targets {
		if t.Pass {
			pass++
		} else {
			fail++
		}
	}
	_, err := fmt.Fprintf(w, "\ntargets met: %d of %d\n", pass, pass+fail)
	for _, e := range r.Errors {
		_, err = fmt.Fprintf(w, "FAILED %s\n", strings.SplitN(e, "\n", 2)[0])
	}
	if r.Error != "" && len(r.Errors) == 0 {
		_, err = fmt.Fprintf(w, "incomplete run: %s\n", strings.SplitN(r.Error, "\n", 2)[0])
	}
	return err
}

// medianRatioNote shows a ratio of medians beside the ratio of best runs.
func medianRatioNote(v float64) string {
	if v == 0 {
		return ""
	}
	return " (of the medians: " + f2(v) + ")"
}

// spreadNote tells how many runs the reported (best) figure was taken from.
func (r *results) spreadNote(key string) string {
	sp, ok := r.Spread[key]
	if !ok || sp.Runs < 2 {
		return ""
	}
	return fmt.Sprintf(" (best of %d, median %s)", sp.Runs, thousands(sp.MedianRate))
}

func (r *results) catchupRuns(key string) []catchupResult {
	if key == spreadExactlyOnce {
		return r.ExactlyOnceRuns
	}
	return r.AtLeastOnceRuns
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// per100k scales CPU seconds for n events to 100,000 events.
func per100k(seconds float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return seconds / float64(n) * 100000
}

// cpuSplit shows where the CPU of a measurement went.
func cpuSplit(u cpuUse) string {
	return fmt.Sprintf("%s / %s / %s / %s (of %s s wall x %d cores)", f1(u.Router), f1(u.Broker), f1(u.MariaDB), f1(u.Bench), f1(u.Seconds), runtime.NumCPU())
}

// othersNote flags a measurement that shared the machine with other
// processes.
func othersNote(u cpuUse) string {
	if u.ForeignC < 0.05 {
		return ""
	}
	return fmt.Sprintf(" (other processes: %s cores)", f2(u.ForeignC))
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

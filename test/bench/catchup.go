package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// catchupResult is one router process catching up a backlog.
type catchupResult struct {
	Label        string  `json:"label"`
	Delivery     string  `json:"delivery"`
	Events       int     `json:"events"`
	PayloadBytes int64   `json:"payload_bytes"`
	WallSeconds  float64 `json:"wall_seconds"`    // process start until the checkpoint covered the end
	StartupSecs  float64 `json:"startup_seconds"` // process start until the first record was readable
	StartupFrom  string  `json:"startup_measured_to"`
	FirstCPSecs  float64 `json:"first_checkpoint_seconds"` // process start until a checkpoint was first stored
	EventsPerSec float64 `json:"events_per_second"`
	// SteadyEventsPerSec excludes start-up: events over (wall - startup).
	SteadyEventsPerSec float64      `json:"steady_events_per_second"`
	MBPerSec           float64      `json:"payload_mb_per_second"`
	CPUSeconds         float64      `json:"cpu_seconds"` // the router, whole process life (rusage)
	CPUPer100k         float64      `json:"cpu_seconds_per_100k_events"`
	PeakRSSBytes       int64        `json:"peak_rss_bytes"`      // VmHWM
	RusageMaxRSSBytes  int64        `json:"rusage_maxrss_bytes"` // includes the benchmark's RSS at fork; see vmHWM
	CPU                cpuUse       `json:"cpu_during_run"`      // every process, process start to checkpoint
	Verified           verification `json:"verified"`
}

// runCatchup starts the router binary on a backlog with an empty
// checkpoint and measures it until its checkpoint covers bl.End.
func runCatchup(ctx context.Context, e *env, o *options, label string, r routerRun, bl backlog) (catchupResult, error) {
	res := catchupResult{Label: label, Delivery: r.Delivery, Events: bl.Rows, PayloadBytes: bl.PayloadBytes}
	topics := r.topics()
	if err := e.admin.createTopics(ctx, o.Partitions, topics...); err != nil {
		return res, err
	}
	defer func() {
		if err := e.admin.deleteTopics(context.WithoutCancel(ctx), append(topics, r.checkpointTopic())...); err != nil {
			e.log.Warn().Err(err).Msg("dropping topics of the run")
		}
	}()
	watch, err := watchFirstRecord(ctx, e.kafka.Brokers, topics)
	if err != nil {
		return res, err
	}
	defer watch.Stop()

	e.settle(ctx, o.Settle)
	meter := newCPUMeter(e.serverPids())
	p, err := startRouter(e.routerBin, e.routerArgs(r), o.RouterEnv, filepath.Join(e.tmp, r.Name+".log"))
	if err != nil {
		return res, err
	}
	defer p.Kill()
	e.log.Info().Str("run", label).Str("delivery", r.Delivery).Int("events", bl.Rows).Msg("router catching up")
	cp, err := waitCheckpoint(ctx, e.kafka.Brokers, r.checkpointTopic(), r.Name, bl.End, p, o.Timeout)
	if err != nil {
		return res, fmt.Errorf("%s: %w", label, err)
	}
	routerCPU, _ := procCPU(p.Pid())
	res.CPU = meter.used(routerCPU)
	watch.waitFirst(5 * time.Second)
	first := watch.Stop()
	u, err := p.Stop(30 * time.Second)
	if err != nil {
		return res, fmt.Errorf("%s: %w", label, err)
	}

	wall := cp.Covered.Sub(p.Started)
	res.WallSeconds = wall.Seconds()
	res.FirstCPSecs = cp.First.Sub(p.Started).Seconds()
	if first.IsZero() {
		// The consumer saw nothing (it should have): fall back to the
		// first stored checkpoint, which follows the first records.
		first, res.StartupFrom = cp.First, "first checkpoint"
	} else {
		res.StartupFrom = "first record"
	}
	res.StartupSecs = first.Sub(p.Started).Seconds()
	if steady := cp.Covered.Sub(first); steady > 0 {
		res.SteadyEventsPerSec = float64(bl.Rows) / steady.Seconds()
	}
	res.EventsPerSec = float64(bl.Rows) / wall.Seconds()
	res.MBPerSec = float64(bl.PayloadBytes) / 1e6 / wall.Seconds()
	res.CPUSeconds = u.CPU.Seconds()
	res.CPUPer100k = u.CPU.Seconds() / float64(bl.Rows) * 100000
	res.PeakRSSBytes, res.RusageMaxRSSBytes = u.PeakRSSBytes, u.RusageMaxRSS

	if res.Verified, err = verifyTopics(ctx, e.admin, e.kafka.Brokers, topics, bl.Rows, o.Timeout); err != nil {
		return res, fmt.Errorf("%s: verifying topics: %w", label, err)
	}
	e.log.Info().Str("run", label).Float64("wall_s", res.WallSeconds).Float64("events_per_s", res.EventsPerSec).
		Float64("startup_s", res.StartupSecs).Float64("cpu_s", res.CPUSeconds).
		Float64("peak_rss_mb", float64(res.PeakRSSBytes)/1e6).Float64("others_cores", res.CPU.ForeignC).
		Str("verified", res.Verified.String()).Msg("catch-up done")
	return res, nil
}

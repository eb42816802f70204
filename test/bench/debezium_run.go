package main

import (
	"context"
	"fmt"
	"time"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// dbzCatchup is one Debezium setup catching up the backlog.
type dbzCatchup struct {
	Setup        string  `json:"setup"`
	Events       int     `json:"events"`
	WallSeconds  float64 `json:"wall_seconds"`    // worker JVM start until every record was readable
	StartupSecs  float64 `json:"startup_seconds"` // worker JVM start until the first record was readable
	ResumeSecs   float64 `json:"connector_start_to_first_record_seconds"`
	EventsPerSec float64 `json:"events_per_second"`
	// SteadyEventsPerSec excludes start-up: events over (wall - startup).
	SteadyEventsPerSec float64 `json:"steady_events_per_second"`
	CPUSeconds         float64 `json:"cpu_seconds"` // the worker JVM, from its start
	CPUPer100k         float64 `json:"cpu_seconds_per_100k_events"`
	// SteadyCPUPer100k is the JVM's CPU from the first record to the last,
	// per 100k events: without its start-up (JIT, plugin scan, group join).
	SteadyCPUPer100k float64      `json:"steady_cpu_seconds_per_100k_events"`
	PeakRSSBytes     int64        `json:"peak_rss_bytes"` // the worker JVM's VmHWM
	CPU              cpuUse       `json:"cpu_during_run"` // "router" is the worker JVM
	Verified         verification `json:"verified"`
}

// catchup starts a worker of setup s and a connector positioned at the
// backlog's start (created STOPPED, its offset set with PATCH
// /connectors/NAME/offsets, then resumed; snapshot.mode=recovery records
// the table's schema first, as for a connector whose schema history is
// new), and measures it until every backlog record is readable.
func (w *dbzWorld) catchup(ctx context.Context, o *options, s dbzSetup, bl backlog) (dbzCatchup, error) {
	e := w.env
	res := dbzCatchup{Setup: s.Name, Events: bl.Rows}
	prefix := e.unique("bench-dbz")
	topics := topicsFor(prefix)
	if err := w.admin.createTopics(ctx, o.Partitions, topics...); err != nil {
		return res, err
	}
	defer func() {
		if err := w.admin.deleteTopics(context.WithoutCancel(ctx), topics...); err != nil {
			e.log.Warn().Err(err).Msg("dropping topics of the run")
		}
	}()
	watch, err := startCountWatch(ctx, w.apache.Brokers(), topics)
	if err != nil {
		return res, err
	}
	defer watch.Stop()
	file, err := firstBinlog(ctx, e)
	if err != nil {
		return res, err
	}

	e.settle(ctx, o.Settle)
	meter := newCPUMeter(e.serverPids())
	c, err := w.startWorker(ctx, s, e.unique("dbz-catchup"))
	if err != nil {
		return res, err
	}
	defer c.Close()
	e.log.Info().Str("setup", s.Name).Int("events", bl.Rows).Msg("debezium catching up")
	const name = "outbox"
	if err := c.CreateConnector(ctx, name, w.connector(e, s, prefix, "recovery"), "STOPPED"); err != nil {
		return res, err
	}
	offset := fmt.Sprintf(`{"offsets":[{"partition":{"server":%q},"offset":{"file":%q,"pos":4,"gtids":%q}}]}`, prefix, file, bl.Start.String())
	if err := c.AlterOffsetsText(ctx, name, offset); err != nil {
		return res, err
	}
	resumed := time.Now()
	if err := c.ResumeConnector(ctx, name); err != nil {
		return res, err
	}
	cpuAtFirst := make(chan time.Duration, 1)
	go func() {
		for watch.first().IsZero() && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		d, _ := procCPU(c.Pid())
		cpuAtFirst <- d
	}()
	done, err := watch.wait(ctx, bl.Rows, o.Timeout)
	if err != nil {
		return res, fmt.Errorf("%w; worker log:\n%s", err, c.LogTail(20))
	}
	cpu, err := procCPU(c.Pid())
	if err != nil {
		return res, err
	}
	res.CPU = meter.used(cpu)
	if res.PeakRSSBytes, err = vmHWM(c.Pid()); err != nil {
		return res, err
	}
	first := watch.first()
	started := c.Started()
	res.WallSeconds = done.Sub(started).Seconds()
	res.StartupSecs = first.Sub(started).Seconds()
	res.ResumeSecs = first.Sub(resumed).Seconds()
	res.EventsPerSec = float64(bl.Rows) / res.WallSeconds
	if steady := done.Sub(first); steady > 0 {
		res.SteadyEventsPerSec = float64(bl.Rows) / steady.Seconds()
	}
	res.CPUSeconds = cpu.Seconds()
	res.CPUPer100k = per100k(res.CPUSeconds, bl.Rows)
	res.SteadyCPUPer100k = per100k((cpu - <-cpuAtFirst).Seconds(), bl.Rows)
	watch.Stop()
	stopWorker(ctx, e, c)
	if res.Verified, err = verifyTopics(ctx, w.admin, w.apache.Brokers(), topics, bl.Rows, o.Timeout); err != nil {
		return res, fmt.Errorf("verifying topics: %w", err)
	}
	e.log.Info().Str("setup", s.Name).Float64("wall_s", res.WallSeconds).Float64("events_per_s", res.EventsPerSec).
		Float64("steady_events_per_s", res.SteadyEventsPerSec).Float64("startup_s", res.StartupSecs).
		Float64("cpu_s", res.CPUSeconds).Float64("peak_rss_mb", mb(res.PeakRSSBytes)).
		Float64("others_cores", res.CPU.ForeignC).Str("verified", res.Verified.String()).Msg("debezium catch-up done")
	return res, nil
}

// firstBinlog is the server's oldest binlog file, for the file of a
// Debezium offset: with GTIDs Debezium positions itself by the offset's
// gtids, and needs a file name beside them.
func firstBinlog(ctx context.Context, e *env) (string, error) {
	rows, err := e.db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	if !rows.Next() {
		return "", fmt.Errorf("SHOW BINARY LOGS: no binlog")
	}
	dst := make([]any, len(cols))
	var file string
	for i := range dst {
		dst[i] = new(any)
	}
	dst[0] = &file
	return file, rows.Scan(dst...)
}

// dbzLive is one Debezium setup following live inserts at each rate.
type dbzLive struct {
	Setup        string       `json:"setup"`
	Rates        []liveResult `json:"rates"`
	PeakRSSBytes int64        `json:"peak_rss_bytes"` // the worker JVM
	CPUSeconds   float64      `json:"cpu_seconds"`
	Verified     verification `json:"verified"`
}

// live starts a worker of setup s whose connector streams from the end of
// the binlog (snapshot.mode=no_data), then runs the open-loop generator at
// each rate and matches each committed insert with its record, as the
// router's live stage does.
func (w *dbzWorld) live(ctx context.Context, o *options, s dbzSetup) (dbzLive, error) {
	e := w.env
	st := dbzLive{Setup: s.Name}
	prefix := e.unique("bench-dbz-live")
	topics := topicsFor(prefix)
	if err := w.admin.createTopics(ctx, o.Partitions, topics...); err != nil {
		return st, err
	}
	defer func() {
		if err := w.admin.deleteTopics(context.WithoutCancel(ctx), topics...); err != nil {
			e.log.Warn().Err(err).Msg("dropping topics of the run")
		}
	}()
	c, err := w.startWorker(ctx, s, e.unique("dbz-live"))
	if err != nil {
		return st, err
	}
	defer c.Close()
	const name = "outbox"
	if err := c.CreateConnector(ctx, name, w.connector(e, s, prefix, "no_data"), ""); err != nil {
		return st, err
	}
	if err := waitStreaming(ctx, c, name, prefix); err != nil {
		return st, err
	}
	cons, err := startLiveConsumer(ctx, w.apache.Brokers(), topics)
	if err != nil {
		return st, err
	}
	defer cons.Stop()
	db, err := openLivePool(ctx, e, o)
	if err != nil {
		return st, err
	}
	defer db.Close()
	gen := newEventGen(o.Seed, uint64(3000+e.serverID()), 1000, o.PayloadBytes, 0.1)
	warm := []outboxEvent{gen.next()}
	if _, err := db.ExecContext(ctx, string(appendOutboxInsert(nil, warm))); err != nil {
		return st, fmt.Errorf("warm-up insert: %w", err)
	}
	if !cons.waitCount(ctx, 1, 60*time.Second) {
		return st, fmt.Errorf("the warm-up event did not arrive within 60s; worker log:\n%s", c.LogTail(20))
	}
	expected := 1
	for _, rate := range o.LiveRates {
		e.log.Info().Str("setup", s.Name).Int("rate", rate).Dur("window", o.LiveDuration).Msg("debezium live: open-loop inserts")
		res := measureRate(ctx, e, o, db, gen, cons, c.Pid(), rate, &expected)
		e.log.Info().Str("setup", s.Name).Int("rate", rate).Float64("achieved", res.AchievedRate).Int("missed", res.Missed).
			Int("not_received", res.Lost).Float64("p50_ms", res.Latency.P50Ms).Float64("p99_ms", res.Latency.P99Ms).
			Float64("max_ms", res.Latency.MaxMs).Msg("debezium live: rate done")
		st.Rates = append(st.Rates, res)
	}
	cpu, _ := procCPU(c.Pid())
	st.CPUSeconds = cpu.Seconds()
	st.PeakRSSBytes, _ = vmHWM(c.Pid())
	cons.Stop()
	stopWorker(ctx, e, c)
	if st.Verified, err = verifyTopics(ctx, w.admin, w.apache.Brokers(), topics, expected, o.Timeout); err != nil {
		return st, fmt.Errorf("verifying topics: %w", err)
	}
	return st, nil
}

// waitStreaming waits until connector name runs and its task has
// connected to the binlog.
func waitStreaming(ctx context.Context, c *devenv.Connect, name, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := c.WaitRunning(ctx, name); err != nil {
		return err
	}
	for c.BinlogConnections(prefix) == 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("connector %s did not connect to the binlog: %w; worker log:\n%s", name, ctx.Err(), c.LogTail(20))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// workerStopWait bounds a worker's graceful stop. Kafka Connect 4.1's
// shutdown hook can wait for good in its REST server's thread pool
// (RestServer.stop, Jetty's Server.join) after the task has stopped.
const workerStopWait = 30 * time.Second

// stopWorker stops the worker gracefully, or kills it after
// workerStopWait; what was measured is read from Kafka afterwards.
func stopWorker(ctx context.Context, e *env, c *devenv.Connect) {
	sctx, cancel := context.WithTimeout(ctx, workerStopWait)
	defer cancel()
	if err := c.Stop(sctx); err != nil {
		e.log.Warn().Err(err).Msg("stopping the worker")
	}
}

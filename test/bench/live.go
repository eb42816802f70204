package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"time"
)

// liveResult is one rate of the live stage.
type liveResult struct {
	TargetRate   int          `json:"target_rate"`
	WindowSecs   float64      `json:"window_seconds"`
	Scheduled    int          `json:"scheduled"`
	Committed    int          `json:"committed"`
	Failed       int          `json:"failed"`
	Missed       int          `json:"missed"` // due in the window, not started in it
	AchievedRate float64      `json:"achieved_rate"`
	Received     int          `json:"received"`
	Lost         int          `json:"not_received"` // committed, not received within the grace time
	Latency      distribution `json:"latency"`      // consumer receive - COMMIT return
	InsertTime   distribution `json:"insert_time"`  // the INSERT's own round trip
	StartLag     distribution `json:"start_lag"`    // insert start - due time
	CPU          cpuUse       `json:"cpu_during_window"`
}

// liveStage is the router's part of the live stage, in one delivery
// mode.
type liveStage struct {
	Delivery     string       `json:"delivery"`
	Rates        []liveResult `json:"rates"`
	PeakRSSBytes int64        `json:"router_peak_rss_bytes"`
	CPUSeconds   float64      `json:"router_cpu_seconds"`
	Verified     verification `json:"verified"`
}

// liveStream is the event generator's stream of each delivery mode's
// live stage, so that their event ids differ (the Debezium stage's live
// runs use another seed).
var liveStream = map[string]uint64{"exactly-once": 1000, "at-least-once": 1001}

// liveGrace is how long after a window the consumer may take to receive
// the last committed events.
const liveGrace = 15 * time.Second

// runLive starts a router in delivery mode at the current end of the
// binlog, then runs the open-loop generator at each rate and matches each
// committed insert with its record in Kafka.
func runLive(ctx context.Context, e *env, o *options, delivery string) (liveStage, error) {
	st := liveStage{Delivery: delivery}
	start, err := binlogPos(ctx, e.db)
	if err != nil {
		return st, err
	}
	r := routerRun{Name: e.unique("live"), Prefix: e.unique("bench-live"), Delivery: delivery, Start: start}
	topics := r.topics()
	if err := e.admin.createTopics(ctx, o.Partitions, topics...); err != nil {
		return st, err
	}
	defer func() {
		if err := e.admin.deleteTopics(context.WithoutCancel(ctx), append(topics, r.checkpointTopic())...); err != nil {
			e.log.Warn().Err(err).Msg("dropping topics of the run")
		}
	}()
	cons, err := startLiveConsumer(ctx, e.kafka.Brokers, topics)
	if err != nil {
		return st, err
	}
	defer cons.Stop()
	db, err := openLivePool(ctx, e, o)
	if err != nil {
		return st, err
	}
	defer db.Close()

	p, err := startRouter(e.routerBin, e.routerArgs(r), o.RouterEnv, filepath.Join(e.tmp, r.Name+".log"))
	if err != nil {
		return st, err
	}
	defer p.Kill()
	gen := newEventGen(o.Seed, liveStream[delivery], o.Aggregates, o.PayloadBytes, 0.1)
	// Warm up: one event through the whole path.
	warm := []outboxEvent{gen.next()}
	if _, err := db.ExecContext(ctx, string(appendOutboxInsert(nil, warm))); err != nil {
		return st, fmt.Errorf("live warm-up insert: %w", err)
	}
	if !cons.waitCount(ctx, 1, 30*time.Second) {
		return st, fmt.Errorf("live: the warm-up event did not arrive within 30s; router log:\n%s", p.LogTail(20))
	}
	expected := 1
	if o.LiveWarmup > 0 {
		// A fresh JVM broker is slow until its JIT has compiled the
		// transaction paths; brokers users run are warm.
		e.log.Info().Dur("warmup", o.LiveWarmup).Msg("live: unmeasured warm-up load")
		lr := openLoop(ctx, db, o.LiveRates[0], o.LiveWarmup, o.LiveConns, gen)
		for _, s := range lr.Samples {
			if s.Err == nil {
				expected++
			}
		}
		cons.waitCount(ctx, expected, liveGrace)
	}
	for _, rate := range o.LiveRates {
		e.log.Info().Str("delivery", delivery).Int("rate", rate).Dur("window", o.LiveDuration).Msg("live: open-loop inserts")
		res := measureRate(ctx, e, o, db, gen, cons, p.Pid(), rate, &expected)
		e.log.Info().Str("delivery", delivery).Int("rate", rate).Float64("achieved", res.AchievedRate).Int("missed", res.Missed).
			Int("failed", res.Failed).Int("not_received", res.Lost).Float64("p50_ms", res.Latency.P50Ms).
			Float64("p99_ms", res.Latency.P99Ms).Float64("max_ms", res.Latency.MaxMs).Msg("live: rate done")
		st.Rates = append(st.Rates, res)
	}
	u, err := p.Stop(30 * time.Second)
	if err != nil {
		return st, fmt.Errorf("live router: %w", err)
	}
	st.PeakRSSBytes, st.CPUSeconds = u.PeakRSSBytes, u.CPU.Seconds()
	cons.Stop()
	if st.Verified, err = verifyTopics(ctx, e.admin, e.kafka.Brokers, topics, expected, o.Timeout); err != nil {
		return st, fmt.Errorf("live: verifying topics: %w", err)
	}
	return st, nil
}

// warmPool opens n connections and returns them to the idle pool, so
// that the generator does not pay for connecting inside its window.
func warmPool(ctx context.Context, db *sql.DB, n int) error {
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("opening load generator connections: %w", err)
		}
		conns = append(conns, c)
		if err := c.PingContext(ctx); err != nil {
			return fmt.Errorf("opening load generator connections: %w", err)
		}
	}
	return nil
}

// measureRate inserts at rate for o.LiveDuration once the machine is
// quiet, waits for the consumer to count every committed insert (expected
// is the running total), and returns the latencies, with the CPU of the
// process pid as the relay's.
func measureRate(ctx context.Context, e *env, o *options, db *sql.DB, gen *eventGen, cons *liveConsumer, pid, rate int, expected *int) liveResult {
	e.settle(ctx, o.Settle)
	before, _ := procCPU(pid)
	meter := newCPUMeter(e.serverPids())
	lr := openLoop(ctx, db, rate, o.LiveDuration, o.LiveConns, gen)
	res := liveResult{TargetRate: rate, WindowSecs: lr.Window.Seconds(), Scheduled: lr.Scheduled, Missed: lr.Missed}
	for _, s := range lr.Samples {
		if s.Err != nil {
			res.Failed++
		} else {
			res.Committed++
		}
	}
	*expected += res.Committed
	cons.waitCount(ctx, *expected, liveGrace)
	after, _ := procCPU(pid)
	res.CPU = meter.used(after - before)
	res.AchievedRate = float64(res.Committed) / lr.Window.Seconds()
	var lat, ins, lag []time.Duration
	for _, s := range lr.Samples {
		if s.Err != nil {
			continue
		}
		ins = append(ins, s.Done.Sub(s.Started))
		lag = append(lag, s.Started.Sub(s.Due))
		if at, ok := cons.ReceivedAt(s.ID); ok {
			lat = append(lat, at.Sub(s.Done))
		} else {
			res.Lost++
		}
	}
	res.Received = len(lat)
	res.Latency, res.InsertTime, res.StartLag = summarise(lat), summarise(ins), summarise(lag)
	return res
}

// openLivePool opens the load generator's o.LiveConns connections to the
// benchmark database, all of them connected before it returns.
func openLivePool(ctx context.Context, e *env, o *options) (*sql.DB, error) {
	db, err := e.maria.DB(benchDB)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(o.LiveConns)
	db.SetMaxIdleConns(o.LiveConns)
	if err := warmPool(ctx, db, o.LiveConns); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

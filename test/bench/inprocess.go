package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/config"
	"github.com/binlog-router/binlog-router/internal/relay"
)

// inProcessRouter runs the router's pipeline (config, binlog reader,
// relay) inside the benchmark, as cmd/binlog-router does, so that a CPU
// profile can see it. The binary has no profiling flag.
type inProcessRouter struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

func startInProcessRouter(ctx context.Context, args []string) (*inProcessRouter, error) {
	cfg := config.Default()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.RegisterRun(fs)
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("in-process router flags: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("in-process router config: %w", err)
	}
	log := zerolog.Nop()
	reader, err := binlog.Open(ctx, cfg.ReaderConfig(log, nil))
	if err != nil {
		return nil, fmt.Errorf("in-process router: %w", err)
	}
	rl, err := relay.New(cfg.RelayConfig(log, "bench", nil), reader)
	if err != nil {
		reader.Close()
		return nil, fmt.Errorf("in-process router: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &inProcessRouter{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer reader.Close()
		p.err = rl.Run(ctx)
	}()
	return p, nil
}

func (p *inProcessRouter) Exited() <-chan struct{} { return p.done }

func (p *inProcessRouter) ExitError() error {
	return fmt.Errorf("in-process router stopped: %v", p.err)
}

// Stop cancels the relay and waits for it to commit and return.
func (p *inProcessRouter) Stop() error {
	p.cancel()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("in-process router did not stop within 30s")
	}
	if errors.Is(p.err, context.Canceled) {
		return nil
	}
	return p.err
}

// profileRouter catches the backlog up with an in-process exactly-once
// router under a CPU profile (dir/router-exactly-once.pprof).
func profileRouter(ctx context.Context, e *env, o *options, bl backlog) error {
	r := routerRun{Name: e.unique("profile"), Prefix: e.unique("bench-profile"), Delivery: "exactly-once", Start: bl.Start}
	topics := r.topics()
	if err := e.admin.createTopics(ctx, o.Partitions, topics...); err != nil {
		return err
	}
	defer func() {
		if err := e.admin.deleteTopics(context.WithoutCancel(ctx), append(topics, r.checkpointTopic())...); err != nil {
			e.log.Warn().Err(err).Msg("dropping topics of the run")
		}
	}()
	stopProfile, err := startCPUProfile(o.ProfileDir, "router-exactly-once")
	if err != nil {
		return err
	}
	began := time.Now()
	p, err := startInProcessRouter(ctx, append(e.routerArgs(r), "--log-level", "error"))
	if err != nil {
		_ = stopProfile()
		return err
	}
	_, werr := waitCheckpoint(ctx, e.kafka.Brokers, r.checkpointTopic(), r.Name, bl.End, p, o.Timeout)
	elapsed := time.Since(began)
	serr := p.Stop()
	if err := stopProfile(); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	if serr != nil {
		return fmt.Errorf("in-process router: %w", serr)
	}
	e.log.Info().Float64("events_per_s", float64(bl.Rows)/elapsed.Seconds()).Str("dir", o.ProfileDir).
		Msg("profiled an in-process exactly-once router")
	return nil
}

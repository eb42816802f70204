package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/pipeline/pipelinetest"
	"github.com/binlog-router/binlog-router/internal/route"
)

// harness runs the live loop (NewLive, Loop.RunSession) over a
// pipelinetest.Source and a pipelinetest.Kafka inside a synctest bubble,
// one session as the live router runs it: open a Sink, start at its
// checkpoint.
type harness struct {
	*pipelinetest.Harness
	set setup
	l   *Loop
}

// setup is what a test sets before the loop is built: its Config, its
// Live policy, and whether the sink is transactional (exactly-once).
type setup struct {
	Config
	Live
	transactional bool
}

// newHarness builds the loop with the setup changed by mod; call it
// inside synctest.Test.
func newHarness(t *testing.T, mod func(*setup)) *harness {
	t.Helper()
	set := setup{Config: Config{Route: route.DefaultConfig()},
		Live:          Live{Name: "binlog-router", ShutdownTimeout: 10 * time.Second, Log: zerolog.Nop()},
		transactional: true}
	if mod != nil {
		mod(&set)
	}
	set.Config = set.Config.WithDefaults()
	h := &harness{Harness: &pipelinetest.Harness{T: t, Src: pipelinetest.NewSource(),
		Kafka: pipelinetest.NewKafka(pipelinetest.Config{Transactional: set.transactional, CheckpointTopic: checkpoint.DefaultTopic,
			MaxMessageBytes: set.MaxMessageBytes, TransactionTimeout: set.TransactionTimeout})}, set: set}
	h.newLoop()
	return h
}

func (h *harness) newLoop() {
	l, err := NewLive(h.set.Config, h.set.Live, h.Src)
	if err != nil {
		h.T.Fatal(err)
	}
	h.l = l
}

// run starts a session; the test's end stops it.
func (h *harness) run() {
	l := h.l
	h.Go(func(ctx context.Context) error { return h.session(ctx, l) })
}

// session runs one session of l: it opens a sink of the Kafka and starts
// at the checkpoint it read, or at the start of the binlog.
func (h *harness) session(ctx context.Context, l *Loop) error {
	l.Reset()
	out := h.Kafka.NewSink()
	defer func() {
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = out.Close(done)
	}()
	cp, err := out.Open(ctx)
	if err != nil {
		return err
	}
	start := gtid.New(gtid.MariaDB)
	if cp != nil {
		if start, err = gtid.Parse(gtid.MariaDB, cp.GTIDSet); err != nil {
			return err
		}
	}
	return l.RunSession(ctx, out, start, cp)
}

// restart runs a new loop (a new process) on the same source and Kafka.
func (h *harness) restart() {
	h.newLoop()
	h.run()
}

var (
	mustNoError = pipelinetest.MustNoError
	mustIs      = pipelinetest.MustIs
)

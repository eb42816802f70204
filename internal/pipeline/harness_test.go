package pipeline

import (
	"context"
	"testing"
	"testing/synctest"
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
// checkpoint. Time stands still until every goroutine waits, so
// intervals, lingers and timeouts are exact.
type harness struct {
	t      *testing.T
	src    *pipelinetest.Source
	kafka  *pipelinetest.Kafka
	set    setup
	l      *Loop
	start  time.Time
	cancel context.CancelFunc
	exited chan struct{} // closed when the session returned
	err    error         // the session's error
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
	h := &harness{t: t, src: pipelinetest.NewSource(), set: set}
	h.kafka = pipelinetest.NewKafka(pipelinetest.Config{Transactional: set.transactional, CheckpointTopic: checkpoint.DefaultTopic,
		MaxMessageBytes: set.MaxMessageBytes, TransactionTimeout: set.TransactionTimeout})
	h.newLoop()
	return h
}

func (h *harness) newLoop() {
	l, err := NewLive(h.set.Config, h.set.Live, h.src)
	if err != nil {
		h.t.Fatal(err)
	}
	h.l = l
}

// run starts a session; the test's end stops it.
func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	h.cancel, h.exited, h.start = cancel, exited, time.Now()
	l := h.l
	go func() {
		defer close(exited)
		h.err = h.session(ctx, l)
	}()
	h.t.Cleanup(func() {
		cancel()
		<-exited
	})
}

// session runs one session of l: it opens a sink of the Kafka and starts
// at the checkpoint it read, or at the start of the binlog.
func (h *harness) session(ctx context.Context, l *Loop) error {
	l.Reset()
	out := h.kafka.NewSink()
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

// wait returns the session's error once it returned by itself; a
// session that goes on fails the test after a minute of bubble time.
func (h *harness) wait() error {
	h.t.Helper()
	select {
	case <-h.exited:
		return h.err
	case <-time.After(time.Minute):
		h.t.Fatalf("the session goes on; committed %v", h.kafka.Txns())
		return nil
	}
}

// stop cancels the session and returns its error.
func (h *harness) stop() error {
	h.cancel()
	return h.wait()
}

// restart runs a new loop (a new process) on the same source and Kafka.
func (h *harness) restart() {
	h.newLoop()
	h.run()
}

// await waits, in bubble time, until cond holds (pipelinetest.Await).
func (h *harness) await(what string, cond func() bool) {
	h.t.Helper()
	pipelinetest.Await(h.t, h.kafka, what, cond)
}

// settle lets every goroutine run until it waits.
func (h *harness) settle() { synctest.Wait() }

// committedIDs waits until n event ids are committed and returns them.
func (h *harness) committedIDs(n int) []string {
	h.t.Helper()
	return pipelinetest.CommittedIDs(h.t, h.kafka, n)
}

// checkCommitted checks every committed Kafka transaction
// (pipelinetest.CheckCommitted).
func (h *harness) checkCommitted() {
	h.t.Helper()
	pipelinetest.CheckCommitted(h.t, h.src, h.kafka)
}

var (
	mustNoError = pipelinetest.MustNoError
	mustIs      = pipelinetest.MustIs
)

package relay

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/pipeline/pipelinetest"
	"github.com/binlog-router/binlog-router/internal/route"
)

// harness runs a Relay over a pipelinetest.Source and Kafka inside a
// synctest bubble: time stands still until every goroutine waits, so
// intervals, lingers and timeouts are exact.
type harness struct {
	t      *testing.T
	src    *pipelinetest.Source
	kafka  *pipelinetest.Kafka
	r      *Relay
	start  time.Time
	cancel context.CancelFunc
	exited chan struct{} // closed when Run returned
	err    error         // Run's error
}

// newHarness builds the relay with cfg changed by mod; call it inside
// synctest.Test.
func newHarness(t *testing.T, mod func(*Config)) *harness {
	t.Helper()
	cfg := Config{Kafka: []kgo.Opt{kgo.SeedBrokers("fake:9092")}, Config: pipeline.Config{Route: route.DefaultConfig(), Logger: zerolog.Nop()}}
	if mod != nil {
		mod(&cfg)
	}
	src := pipelinetest.NewSource()
	r, err := newRelay(cfg, src)
	if err != nil {
		t.Fatal(err)
	}
	k := pipelinetest.NewKafka(pipelinetest.Config{Transactional: r.cfg.Delivery == ExactlyOnce, CheckpointTopic: r.cfg.CheckpointTopic,
		MaxMessageBytes: r.cfg.MaxMessageBytes, TransactionTimeout: r.cfg.TransactionTimeout})
	r.cluster = fakeCluster{k}
	return &harness{t: t, src: src, kafka: k, r: r}
}

// fakeCluster is the cluster of a pipelinetest.Kafka.
type fakeCluster struct{ *pipelinetest.Kafka }

func (fakeCluster) ensureCheckpointTopic(context.Context) error { return nil }
func (c fakeCluster) newSink() (pipeline.Sink, error)           { return c.NewSink(), nil }

// run starts Relay.Run; the test's end stops it.
func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	h.cancel, h.exited, h.start = cancel, exited, time.Now()
	r := h.r
	go func() {
		defer close(exited)
		h.err = r.Run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		<-exited
	})
}

// wait returns Run's error once it returned by itself; a Run that goes
// on fails the test after a minute of bubble time.
func (h *harness) wait() error {
	h.t.Helper()
	select {
	case <-h.exited:
		return h.err
	case <-time.After(time.Minute):
		h.t.Fatalf("Run goes on; committed %v", h.kafka.Txns())
		return nil
	}
}

// stop cancels Run and returns its error.
func (h *harness) stop() error {
	h.cancel()
	return h.wait()
}

// restart runs a new Relay (a new process) on the same source and Kafka.
func (h *harness) restart() {
	r, err := newRelay(h.r.cfg, h.src)
	if err != nil {
		h.t.Fatal(err)
	}
	r.cluster = fakeCluster{h.kafka}
	h.r = r
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

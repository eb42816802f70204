package relay

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/pipeline/pipelinetest"
	"github.com/binlog-router/binlog-router/internal/route"
)

// harness runs a Relay over a pipelinetest.Source and Kafka inside a
// synctest bubble (pipelinetest.Harness).
type harness struct {
	*pipelinetest.Harness
	r *Relay
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
	return &harness{Harness: &pipelinetest.Harness{T: t, Src: src, Kafka: k}, r: r}
}

// fakeCluster is the cluster of a pipelinetest.Kafka.
type fakeCluster struct{ *pipelinetest.Kafka }

func (fakeCluster) ensureCheckpointTopic(context.Context) error { return nil }
func (c fakeCluster) newSink() (pipeline.Sink, error)           { return c.NewSink(), nil }

// run starts Relay.Run; the test's end stops it.
func (h *harness) run() { h.Go(h.r.Run) }

// restart runs a new Relay (a new process) on the same source and Kafka.
func (h *harness) restart() {
	r, err := newRelay(h.r.cfg, h.Src)
	if err != nil {
		h.T.Fatal(err)
	}
	r.cluster = fakeCluster{h.Kafka}
	h.r = r
	h.run()
}

var (
	mustNoError = pipelinetest.MustNoError
	mustIs      = pipelinetest.MustIs
)

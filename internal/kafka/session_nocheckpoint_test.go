package kafka

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
)

// A session with NoCheckpoint (a replay's) commits its records alone: a
// read_committed consumer reads the committed ones and never the aborted
// one, and no checkpoint topic is created or written.
func TestSessionNoCheckpoint(t *testing.T) {
	k := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func() *Session {
		s, err := NewSession(SessionConfig{
			Producer:         testConfig(k),
			TransactionalIDs: []string{"replay-test"},
			CheckpointTopic:  checkpoint.DefaultTopic,
			NoCheckpoint:     true,
			Log:              zerolog.Nop(),
		})
		mustNil(t, err)
		cp, err := s.Open(ctx)
		if cp != nil || err != nil {
			t.Fatalf("Open = %v, %v; want no checkpoint", cp, err)
		}
		return s
	}

	s := open()
	mustNil(t, s.Commit(ctx, nil)) // nothing open: nothing to commit
	mustNil(t, s.Produce(ctx, record("t", "a")))
	mustNil(t, s.Produce(ctx, record("t", "b")))
	mustNil(t, s.Commit(ctx, &checkpoint.Checkpoint{Name: "ignored", GTIDSet: "0-1-1"}))
	mustNil(t, s.Produce(ctx, record("t", "aborted")))
	s.Abort(ctx, errors.New("test"))
	_ = s.Close(ctx)

	// The next replay with the id fences the first and goes on.
	s = open()
	mustNil(t, s.Produce(ctx, record("t", "c")))
	mustNil(t, s.Commit(ctx, nil))
	mustNil(t, s.Close(ctx))
	adm, err := NewAdmin(kgo.SeedBrokers(k.Brokers...))
	mustNil(t, err)
	defer adm.Close()
	topics, err := adm.ListTopics(ctx) // all: naming one could create it
	mustNil(t, err)

	if got, want := readCommitted(t, k, "t", "c"), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("read_committed consumer read %v, want %v", got, want)
	}
	if topics.Has(checkpoint.DefaultTopic) {
		t.Errorf("the checkpoint topic %s exists: a session without checkpoint must not create it", checkpoint.DefaultTopic)
	}
}

package harness

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/kafka"
)

// checkpointWait bounds the wait for a router's checkpoint to reach a
// GTID set.
const checkpointWait = 2 * time.Minute

// checkpointStore is a checkpoint topic as a test reads it: what the
// routers of the test stored there.
type checkpointStore struct {
	t       testing.TB
	brokers []string
	topic   string
}

// checkpoints is the topic of the env's routers (--checkpoint-topic of
// e.args).
func (e *Env) checkpoints() checkpointStore {
	return checkpointStore{t: e.T, brokers: e.Kafka.Brokers, topic: e.CheckpointTopic()}
}

// CheckpointTopic is the env's --checkpoint-topic.
func (e *Env) CheckpointTopic() string { return e.Prefix + "_checkpoints" }

// load returns the stored checkpoint of name as kafka.LoadCheckpoint does,
// giving up after 30 s.
func (c checkpointStore) load(name string) (*checkpoint.Checkpoint, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return kafka.LoadCheckpoint(ctx, c.topic, name, kgo.SeedBrokers(c.brokers...))
}

// at reports whether the stored checkpoint of name is at the GTID set
// want; an error reading it is false.
func (c checkpointStore) at(name, want string) bool {
	cp, err := c.load(name)
	return err == nil && cp.GTIDSet == want
}

// wait polls until the stored checkpoint of name is at want.
func (c checkpointStore) wait(name, want string) {
	c.t.Helper()
	var last string
	var lastErr error
	err := Poll(checkpointWait, func() bool {
		cp, err := c.load(name)
		if lastErr = err; err != nil {
			return false
		}
		last = cp.GTIDSet
		return last == want
	})
	if err != nil {
		c.t.Fatalf("checkpoint %q never reached %q (last %q, %v): %v", name, want, last, lastErr, err)
	}
}

// history reads every committed checkpoint record of name, in order, up
// to the first whose GTID set is last at a transaction boundary.
func (c checkpointStore) history(name, last string) []*checkpoint.Checkpoint {
	c.t.Helper()
	var out []*checkpoint.Checkpoint
	decoded := 0 // records of the topic looked at so far
	_, err := NewConsumer(c.t, c.brokers, ExactTopic(c.topic)).ReadUntil(func(recs []*kgo.Record) bool {
		for ; decoded < len(recs); decoded++ {
			rec := recs[decoded]
			if string(rec.Key) != name || len(rec.Value) == 0 {
				continue
			}
			cp, err := checkpoint.Decode(rec.Value)
			if err != nil {
				c.t.Fatalf("checkpoint record at offset %d: %v", rec.Offset, err)
			}
			out = append(out, cp)
			if cp.GTIDSet == last && cp.TxnGTID == "" {
				return true
			}
		}
		return false
	}, time.Minute)
	if err != nil {
		c.t.Fatalf("reading the checkpoint topic: never reached %s: %v", last, err)
	}
	return out
}

// Checkpoint returns the stored checkpoint of name, or the error of
// loading it (checkpoint.ErrCheckpointMissing when there is none).
func (e *Env) Checkpoint(name string) (*checkpoint.Checkpoint, error) {
	return e.checkpoints().load(name)
}

// MustCheckpoint returns the stored checkpoint of name; anything else
// fails the test.
func (e *Env) MustCheckpoint(name string) *checkpoint.Checkpoint {
	e.T.Helper()
	cp, err := e.Checkpoint(name)
	if err != nil {
		e.T.Fatalf("loading checkpoint %q: %v", name, err)
	}
	return cp
}

// CheckpointSet returns the stored checkpoint's GTID set, "" if there is
// no checkpoint of name.
func (e *Env) CheckpointSet(name string) string {
	e.T.Helper()
	cp, err := e.Checkpoint(name)
	if isMissing(err) {
		return ""
	}
	if err != nil {
		e.T.Fatalf("loading checkpoint %q: %v", name, err)
	}
	return cp.GTIDSet
}

// CheckpointAt reports whether the stored checkpoint of name is at want.
func (e *Env) CheckpointAt(name, want string) bool { return e.checkpoints().at(name, want) }

// WaitCheckpoint polls until the stored checkpoint of name is at want.
func (e *Env) WaitCheckpoint(name, want string) {
	e.T.Helper()
	e.checkpoints().wait(name, want)
}

// CheckpointHistory reads every committed checkpoint record of name up
// to the one at last.
func (e *Env) CheckpointHistory(name, last string) []*checkpoint.Checkpoint {
	e.T.Helper()
	return e.checkpoints().history(name, last)
}

func isMissing(err error) bool { return errors.Is(err, checkpoint.ErrCheckpointMissing) }

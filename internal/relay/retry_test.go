package relay

import (
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/pipeline/pipelinetest"
	"github.com/binlog-router/binlog-router/internal/route"
)

// A record the brokers refuse ends the flush: nothing of its Kafka
// transaction is committed. A refusal that repeats stops the relay naming
// the row; one that waiting may cure starts a new session from the
// committed checkpoint.
func TestRelayProduceFailure(t *testing.T) {
	t.Run("final", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, nil)
			h.src.Txn(1, 1)
			h.run()
			h.committedIDs(1)
			h.kafka.Mu.Lock()
			h.kafka.FailRecord = failID(3, kerr.TopicAuthorizationFailed)
			h.kafka.Mu.Unlock()
			h.src.Txn(2, 2, 3)
			err := h.wait()
			mustIs(t, err, kerr.TopicAuthorizationFailed)
			if !strings.Contains(err.Error(), "event_id "+pipelinetest.EventID(3)+" (transaction 0-1-2)") {
				t.Errorf("error %q does not name the row", err)
			}
			if got := h.kafka.IDs(); !slices.Equal(got, pipelinetest.IDs(1)) {
				t.Errorf("committed %v, want %v", got, pipelinetest.IDs(1))
			}
			if h.kafka.Aborts != 1 || h.kafka.Sinks != 1 {
				t.Errorf("%d aborts, %d sessions; want 1, 1", h.kafka.Aborts, h.kafka.Sinks)
			}
			h.checkCommitted()
		})
	})
	t.Run("retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, nil)
			h.src.Txn(1, 1)
			h.run()
			h.committedIDs(1)
			h.kafka.Mu.Lock()
			once := failID(3, kerr.NotLeaderForPartition)
			h.kafka.FailRecord = func(rec *kgo.Record) error {
				err := once(rec)
				if err != nil {
					h.kafka.FailRecord = nil
				}
				return err
			}
			h.kafka.Mu.Unlock()
			h.src.Txn(2, 2, 3)
			got := h.committedIDs(3)
			if want := pipelinetest.IDs(1, 2, 3); !slices.Equal(got, want) {
				t.Errorf("committed %v, want %v", got, want)
			}
			if h.kafka.Aborts != 1 || h.kafka.Sinks != 2 {
				t.Errorf("%d aborts, %d sessions; want 1, 2", h.kafka.Aborts, h.kafka.Sinks)
			}
			if runs := h.src.Starts(); len(runs) != 2 || runs[1].From != "0-1-1" {
				t.Errorf("sessions started at %+v, want the second at the checkpoint 0-1-1", runs)
			}
			h.checkCommitted()
			mustNoError(t, "stop", h.stop())
		})
	})
}

// failID fails the record of event id n with err.
func failID(n int, err error) func(*kgo.Record) error {
	return func(rec *kgo.Record) error {
		for _, h := range rec.Headers {
			if h.Key == route.HeaderID && string(h.Value) == pipelinetest.EventID(n) {
				return err
			}
		}
		return nil
	}
}

// A producer fenced by another instance while its Kafka transaction is
// young stops with ErrFenced, without ending the transaction (an abort
// would fence the instance that took over), and commits nothing more.
func TestRelayFencedCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.src.Txn(1, 1)
		h.run()
		h.committedIDs(1)
		h.src.Rows(2, 2)
		h.settle()
		h.kafka.Fence()
		h.src.End(2)
		err := h.wait()
		mustIs(t, err, ErrFenced)
		mustIs(t, err, kerr.InvalidProducerEpoch)
		if got := h.kafka.IDs(); !slices.Equal(got, pipelinetest.IDs(1)) {
			t.Errorf("committed %v, want %v", got, pipelinetest.IDs(1))
		}
		if h.kafka.Drops != 1 || h.kafka.Aborts != 0 || h.kafka.Sinks != 1 {
			t.Errorf("%d dropped, %d aborted transactions, %d sessions; want 1, 0, 1", h.kafka.Drops, h.kafka.Aborts, h.kafka.Sinks)
		}
		h.checkCommitted()
	})
}

// A commit whose outcome is unknown (the answer to EndTransaction was
// lost) starts a new session from the checkpoint the brokers have: the
// transaction's rows are committed exactly once whether or not the lost
// commit took effect.
func TestRelayUnknownCommitOutcome(t *testing.T) {
	for _, applied := range []bool{true, false} {
		name := map[bool]string{true: "committed", false: "not committed"}[applied]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, nil)
				lost := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
				h.kafka.CommitErr = func() (bool, error) {
					h.kafka.CommitErr = nil
					return applied, lost
				}
				h.src.Txn(1, 1, 2)
				h.src.Txn(2, 3)
				h.run()
				h.await("a second session", func() bool { return len(h.src.Starts()) == 2 })
				h.src.Txn(3, 4)
				got := h.committedIDs(4)
				if want := pipelinetest.IDs(1, 2, 3, 4); !slices.Equal(got, want) {
					t.Errorf("committed %v, want %v", got, want)
				}
				wantFrom := map[bool]string{true: "0-1-2", false: ""}[applied]
				if from := h.src.Starts()[1].From; from != wantFrom {
					t.Errorf("second session from %q, want %q", from, wantFrom)
				}
				h.checkCommitted()
				mustNoError(t, "stop", h.stop())
			})
		})
	}
}

// A transaction open longer than the transaction timeout (the process
// was paused) is aborted by the broker; the stale epoch is not a
// takeover: a new session in the same process resumes from the committed
// checkpoint.
func TestRelayTransactionTimeoutStartsNewSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.TransactionTimeout = 10 * time.Second })
		h.src.Txn(1, 1)
		h.run()
		h.committedIDs(1)
		h.kafka.Mu.Lock()
		h.kafka.FlushDelay = 11 * time.Second // paused in the commit
		h.kafka.Mu.Unlock()
		h.src.Txn(2, 2)
		got := h.committedIDs(2)
		if want := pipelinetest.IDs(1, 2); !slices.Equal(got, want) {
			t.Errorf("committed %v, want %v", got, want)
		}
		if h.kafka.Drops != 1 || h.kafka.Aborts != 0 {
			t.Errorf("%d dropped, %d aborted transactions; want 1, 0", h.kafka.Drops, h.kafka.Aborts)
		}
		if from := h.src.Starts()[1].From; from != "0-1-1" {
			t.Errorf("new session from %q, want the checkpoint 0-1-1", from)
		}
		h.checkCommitted()
		mustNoError(t, "stop", h.stop())
	})
}

// A stop whose last commit does not finish within ShutdownTimeout aborts
// the open Kafka transaction and returns ErrShutdownTimeout, exactly
// ShutdownTimeout after the stop.
func TestRelayShutdownTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.src.Txn(1, 1)
		h.run()
		h.committedIDs(1)
		h.kafka.Mu.Lock()
		h.kafka.StallFlush = true
		h.kafka.Mu.Unlock()
		h.src.Txn(2, 2)
		h.settle()
		stopped := time.Now()
		err := h.stop()
		mustIs(t, err, pipeline.ErrShutdownTimeout)
		if took := time.Since(stopped); took != h.r.cfg.ShutdownTimeout {
			t.Errorf("stopped after %s, want the shutdown timeout %s", took, h.r.cfg.ShutdownTimeout)
		}
		if retriable(err) {
			t.Errorf("%v is retried", err)
		}
		// Kafka took the records in time: the deadline was the stop's.
		if msg := err.Error(); strings.Contains(msg, "--kafka-timeout") || strings.Contains(msg, "Kafka unavailable") || !strings.Contains(msg, "--shutdown-timeout") {
			t.Errorf("error %q blames Kafka, or does not name --shutdown-timeout", msg)
		}
		if got := h.kafka.IDs(); !slices.Equal(got, pipelinetest.IDs(1)) {
			t.Errorf("committed %v, want %v", got, pipelinetest.IDs(1))
		}
		if h.kafka.Aborts != 1 {
			t.Errorf("%d aborted transactions, want 1", h.kafka.Aborts)
		}
		h.checkCommitted()
	})
}

// An error with which the source stops is the source's: it is final
// unless the connection was lost, whatever its text says.
func TestRelaySourceErrorIsNotKafkas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.src.Fail = errors.New("outbox table app.outbox, transaction 0-1-7: connection reset in the payload")
		h.run()
		err := h.wait()
		if err == nil || !strings.Contains(err.Error(), "connection reset in the payload") || h.kafka.Sinks != 1 {
			t.Fatalf("Run = %v after %d sessions; want the source's error after one", err, h.kafka.Sinks)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.src.Fail = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		h.src.Txn(1, 1)
		h.run()
		h.committedIDs(1)
		if h.kafka.Sinks != 2 {
			t.Errorf("%d sessions, want a second after the lost connection", h.kafka.Sinks)
		}
		mustNoError(t, "stop", h.stop())
	})
}

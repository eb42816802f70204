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
			h.Src.Txn(1, 1)
			h.run()
			h.CommittedIDs(1)
			h.Kafka.Mu.Lock()
			h.Kafka.FailRecord = failID(3, kerr.TopicAuthorizationFailed)
			h.Kafka.Mu.Unlock()
			h.Src.Txn(2, 2, 3)
			err := h.Wait()
			mustIs(t, err, kerr.TopicAuthorizationFailed)
			if !strings.Contains(err.Error(), "event_id "+pipelinetest.EventID(3)+" (transaction 0-1-2)") {
				t.Errorf("error %q does not name the row", err)
			}
			if got := h.Kafka.IDs(); !slices.Equal(got, pipelinetest.IDs(1)) {
				t.Errorf("committed %v, want %v", got, pipelinetest.IDs(1))
			}
			if h.Kafka.Aborts != 1 || h.Kafka.Sinks != 1 {
				t.Errorf("%d aborts, %d sessions; want 1, 1", h.Kafka.Aborts, h.Kafka.Sinks)
			}
			h.CheckCommitted()
		})
	})
	t.Run("retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, nil)
			h.Src.Txn(1, 1)
			h.run()
			h.CommittedIDs(1)
			h.Kafka.Mu.Lock()
			once := failID(3, kerr.NotLeaderForPartition)
			h.Kafka.FailRecord = func(rec *kgo.Record) error {
				err := once(rec)
				if err != nil {
					h.Kafka.FailRecord = nil
				}
				return err
			}
			h.Kafka.Mu.Unlock()
			h.Src.Txn(2, 2, 3)
			got := h.CommittedIDs(3)
			if want := pipelinetest.IDs(1, 2, 3); !slices.Equal(got, want) {
				t.Errorf("committed %v, want %v", got, want)
			}
			if h.Kafka.Aborts != 1 || h.Kafka.Sinks != 2 {
				t.Errorf("%d aborts, %d sessions; want 1, 2", h.Kafka.Aborts, h.Kafka.Sinks)
			}
			if runs := h.Src.Starts(); len(runs) != 2 || runs[1].From != "0-1-1" {
				t.Errorf("sessions started at %+v, want the second at the checkpoint 0-1-1", runs)
			}
			h.CheckCommitted()
			mustNoError(t, "stop", h.Stop())
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
		h.Src.Txn(1, 1)
		h.run()
		h.CommittedIDs(1)
		h.Src.Rows(2, 2)
		h.Settle()
		h.Kafka.Fence()
		h.Src.End(2)
		err := h.Wait()
		mustIs(t, err, ErrFenced)
		mustIs(t, err, kerr.InvalidProducerEpoch)
		if got := h.Kafka.IDs(); !slices.Equal(got, pipelinetest.IDs(1)) {
			t.Errorf("committed %v, want %v", got, pipelinetest.IDs(1))
		}
		if h.Kafka.Drops != 1 || h.Kafka.Aborts != 0 || h.Kafka.Sinks != 1 {
			t.Errorf("%d dropped, %d aborted transactions, %d sessions; want 1, 0, 1", h.Kafka.Drops, h.Kafka.Aborts, h.Kafka.Sinks)
		}
		h.CheckCommitted()
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
				h.Kafka.CommitErr = func() (bool, error) {
					h.Kafka.CommitErr = nil
					return applied, lost
				}
				h.Src.Txn(1, 1, 2)
				h.Src.Txn(2, 3)
				h.run()
				h.Await("a second session", func() bool { return len(h.Src.Starts()) == 2 })
				h.Src.Txn(3, 4)
				got := h.CommittedIDs(4)
				if want := pipelinetest.IDs(1, 2, 3, 4); !slices.Equal(got, want) {
					t.Errorf("committed %v, want %v", got, want)
				}
				wantFrom := map[bool]string{true: "0-1-2", false: ""}[applied]
				if from := h.Src.Starts()[1].From; from != wantFrom {
					t.Errorf("second session from %q, want %q", from, wantFrom)
				}
				h.CheckCommitted()
				mustNoError(t, "stop", h.Stop())
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
		h.Src.Txn(1, 1)
		h.run()
		h.CommittedIDs(1)
		h.Kafka.Mu.Lock()
		h.Kafka.FlushDelay = 11 * time.Second // paused in the commit
		h.Kafka.Mu.Unlock()
		h.Src.Txn(2, 2)
		got := h.CommittedIDs(2)
		if want := pipelinetest.IDs(1, 2); !slices.Equal(got, want) {
			t.Errorf("committed %v, want %v", got, want)
		}
		if h.Kafka.Drops != 1 || h.Kafka.Aborts != 0 {
			t.Errorf("%d dropped, %d aborted transactions; want 1, 0", h.Kafka.Drops, h.Kafka.Aborts)
		}
		if from := h.Src.Starts()[1].From; from != "0-1-1" {
			t.Errorf("new session from %q, want the checkpoint 0-1-1", from)
		}
		h.CheckCommitted()
		mustNoError(t, "stop", h.Stop())
	})
}

// A stop whose last commit does not finish within ShutdownTimeout aborts
// the open Kafka transaction and returns ErrShutdownTimeout, exactly
// ShutdownTimeout after the stop.
func TestRelayShutdownTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.Src.Txn(1, 1)
		h.run()
		h.CommittedIDs(1)
		h.Kafka.Mu.Lock()
		h.Kafka.StallFlush = true
		h.Kafka.Mu.Unlock()
		h.Src.Txn(2, 2)
		h.Settle()
		stopped := time.Now()
		err := h.Stop()
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
		if got := h.Kafka.IDs(); !slices.Equal(got, pipelinetest.IDs(1)) {
			t.Errorf("committed %v, want %v", got, pipelinetest.IDs(1))
		}
		if h.Kafka.Aborts != 1 {
			t.Errorf("%d aborted transactions, want 1", h.Kafka.Aborts)
		}
		h.CheckCommitted()
	})
}

// An error with which the source stops is the source's: it is final
// unless the connection was lost, whatever its text says.
func TestRelaySourceErrorIsNotKafkas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.Src.Fail = errors.New("outbox table app.outbox, transaction 0-1-7: connection reset in the payload")
		h.run()
		err := h.Wait()
		if err == nil || !strings.Contains(err.Error(), "connection reset in the payload") || h.Kafka.Sinks != 1 {
			t.Fatalf("Run = %v after %d sessions; want the source's error after one", err, h.Kafka.Sinks)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.Src.Fail = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		h.Src.Txn(1, 1)
		h.run()
		h.CommittedIDs(1)
		if h.Kafka.Sinks != 2 {
			t.Errorf("%d sessions, want a second after the lost connection", h.Kafka.Sinks)
		}
		mustNoError(t, "stop", h.Stop())
	})
}

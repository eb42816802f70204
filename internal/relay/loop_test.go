package relay

import (
	"bytes"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/route"
)

// A Kafka transaction holds at most CommitRecords records: the commit
// comes before the row that would exceed it, also inside a binlog
// transaction, with a checkpoint naming the position there.
func TestRelayCommitsByCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.CommitRecords = 3 })
		for i := 1; i <= 7; i++ {
			h.src.txn(i, i)
		}
		h.src.txn(8, 8, 9, 10, 11) // split inside: 7 8 9 | 10 11
		h.run()
		got := h.committedIDs(11)
		if want := ids(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11); !slices.Equal(got, want) {
			t.Fatalf("committed %v, want %v", got, want)
		}
		if got := sizes(h.kafka.txns()); !slices.Equal(got, []int{3, 3, 3, 2}) {
			t.Errorf("Kafka transactions of %v records, want [3 3 3 2]", got)
		}
		h.checkCommitted()
		if cp := h.kafka.txns()[2].checkpoint; cp.GTIDSet != "0-1-7" || cp.TxnGTID != "0-1-8" || cp.TxnRows != 2 {
			t.Errorf("checkpoint inside 0-1-8: %s + %s rows %d, want 0-1-7 + 0-1-8 rows 2", cp.GTIDSet, cp.TxnGTID, cp.TxnRows)
		}
		mustNoError(t, "stop", h.stop())
	})
}

// Under a backlog, a Kafka transaction is committed at the first
// binlog transaction boundary once it is CommitInterval old.
func TestRelayCommitsByInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.QueueRows = 8 })
		h.kafka.produceDelay = time.Millisecond // Kafka takes 1000 records a second
		const n = 400
		for i := 1; i <= n; i++ {
			h.src.txn(i, i)
		}
		h.run()
		h.committedIDs(n)
		h.checkCommitted()
		txns := h.kafka.txns()
		t.Logf("Kafka transactions of %v records", sizes(txns))
		for i, txn := range txns {
			// 100ms of records: the commit comes before the next
			// transaction's row.
			if len(txn.ids) > 101 {
				t.Errorf("Kafka transaction %d holds %d records: more than --commit-interval (100ms at 1ms a record) allows; transactions of %v records",
					i, len(txn.ids), sizes(txns))
				break
			}
		}
		if len(txns) < n/101 {
			t.Errorf("%d Kafka transactions for %d records at 1ms each, want one per 100ms", len(txns), n)
		}
		mustNoError(t, "stop", h.stop())
	})
}

// When the source has nothing more the open Kafka transaction is
// committed, CommitLinger after the previous commit at the latest.
func TestRelayCommitsWhenIdle(t *testing.T) {
	for _, delivery := range []Delivery{ExactlyOnce, AtLeastOnce} {
		t.Run(string(delivery), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, func(c *Config) { c.Delivery = delivery })
				h.src.txn(1, 1, 2)
				h.run()
				h.committedIDs(2)
				if at := h.kafka.txns()[0].at.Sub(h.start); at != 2*time.Millisecond {
					t.Errorf("committed %s after the start, want the 2ms linger", at)
				}
				h.src.txn(2, 3)
				h.committedIDs(3)
				h.checkCommitted()
				if got := sizes(h.kafka.txns()); !slices.Equal(got, []int{2, 1}) {
					t.Errorf("Kafka transactions of %v records, want [2 1]", got)
				}
				if cp := h.kafka.txns()[1].checkpoint; cp.GTIDSet != "0-1-2" || cp.TxnGTID != "" {
					t.Errorf("last checkpoint %s (txn %q), want 0-1-2 at a boundary", cp.GTIDSet, cp.TxnGTID)
				}
				mustNoError(t, "stop", h.stop())
			})
		})
	}
}

// Transactions that come within CommitLinger of the previous commit share
// the next Kafka transaction, committed when the linger has passed.
func TestRelayLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.src.txn(1, 1)
		h.run()
		h.committedIDs(1)
		first := h.kafka.txns()[0].at
		time.Sleep(time.Until(first.Add(500 * time.Microsecond)))
		h.src.txn(2, 2)
		h.settle()
		time.Sleep(time.Until(first.Add(1500 * time.Microsecond)))
		h.src.txn(3, 3)
		h.settle()
		if n := len(h.kafka.txns()); n != 1 {
			t.Fatalf("%d Kafka transactions 1ms after the first commit, want 1: the linger holds the idle commit", n)
		}
		h.committedIDs(3)
		txns := h.kafka.txns()
		if got := sizes(txns); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("Kafka transactions of %v records, want [1 2]", got)
		}
		if gap := txns[1].at.Sub(first); gap != 2*time.Millisecond {
			t.Errorf("second commit %s after the first, want the 2ms linger", gap)
		}
		h.checkCommitted()

		// Once the linger has passed, an idle commit is immediate.
		time.Sleep(time.Second)
		h.src.txn(4, 4)
		before := time.Now()
		h.committedIDs(4)
		if at := h.kafka.txns()[2].at; !at.Equal(before) {
			t.Errorf("commit %s after the transaction, want at once", at.Sub(before))
		}
		mustNoError(t, "stop", h.stop())
	})
}

// A batch that ends inside a binlog transaction is not committed at a
// boundary; the transaction is committed when it ends, or in parts when
// the Kafka transaction reaches half the transaction timeout, and a new
// process resumes inside it without repeating a row.
func TestRelayBatchEndsInsideTransaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.TransactionTimeout = 10 * time.Second })
		h.src.txn(1, 1)
		h.run()
		h.committedIDs(1)
		h.src.rows(2, 2, 3)
		time.Sleep(time.Second)
		h.settle()
		if got := h.kafka.ids(); !slices.Equal(got, ids(1)) {
			t.Fatalf("committed %v inside transaction 0-1-2, want only %v", got, ids(1))
		}
		h.src.end(2)
		h.committedIDs(3)
		if cp := h.kafka.txns()[1].checkpoint; cp.GTIDSet != "0-1-2" || cp.TxnGTID != "" {
			t.Errorf("checkpoint %s (txn %q), want 0-1-2", cp.GTIDSet, cp.TxnGTID)
		}

		// Half the transaction timeout into a binlog transaction its rows
		// so far are committed, with a checkpoint inside it.
		h.src.rows(3, 4, 5)
		begun := time.Now()
		h.committedIDs(5)
		txns := h.kafka.txns()
		cp := txns[2].checkpoint
		if cp.GTIDSet != "0-1-2" || cp.TxnGTID != "0-1-3" || cp.TxnRows != 2 {
			t.Errorf("checkpoint %s + %s rows %d, want 0-1-2 + 0-1-3 rows 2", cp.GTIDSet, cp.TxnGTID, cp.TxnRows)
		}
		if age := txns[2].at.Sub(begun); age < 5*time.Second || age > 5*time.Second+200*time.Millisecond {
			t.Errorf("committed %s into the transaction, want half the transaction timeout (5s)", age)
		}
		h.checkCommitted()
		mustNoError(t, "stop", h.stop())

		// A new process resumes inside 0-1-3: its first two rows are not
		// produced again.
		h.src.rows(3, 6)
		h.src.end(3)
		h.restart()
		h.committedIDs(6)
		runs := h.src.starts()
		if last := runs[len(runs)-1]; last.from != "0-1-2" || last.resume.GTID != "0-1-3" || last.resume.Rows != 2 {
			t.Errorf("resumed from %+v, want 0-1-2 inside 0-1-3 after 2 rows", last)
		}
		h.checkCommitted()
		mustNoError(t, "stop", h.stop())
	})
}

// A record the brokers refuse ends the flush: nothing of its Kafka
// transaction is committed. A refusal that repeats stops the relay naming
// the row; one that waiting may cure starts a new session from the
// committed checkpoint.
func TestRelayProduceFailure(t *testing.T) {
	t.Run("final", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, nil)
			h.src.txn(1, 1)
			h.run()
			h.committedIDs(1)
			h.kafka.mu.Lock()
			h.kafka.failRecord = failID(3, kerr.TopicAuthorizationFailed)
			h.kafka.mu.Unlock()
			h.src.txn(2, 2, 3)
			err := h.wait()
			mustIs(t, err, kerr.TopicAuthorizationFailed)
			if !strings.Contains(err.Error(), "event_id "+eventID(3)+" (transaction 0-1-2)") {
				t.Errorf("error %q does not name the row", err)
			}
			if got := h.kafka.ids(); !slices.Equal(got, ids(1)) {
				t.Errorf("committed %v, want %v", got, ids(1))
			}
			if h.kafka.aborts != 1 || h.kafka.sinks != 1 {
				t.Errorf("%d aborts, %d sessions; want 1, 1", h.kafka.aborts, h.kafka.sinks)
			}
			h.checkCommitted()
		})
	})
	t.Run("retried", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, nil)
			h.src.txn(1, 1)
			h.run()
			h.committedIDs(1)
			h.kafka.mu.Lock()
			once := failID(3, kerr.NotLeaderForPartition)
			h.kafka.failRecord = func(rec *kgo.Record) error {
				err := once(rec)
				if err != nil {
					h.kafka.failRecord = nil
				}
				return err
			}
			h.kafka.mu.Unlock()
			h.src.txn(2, 2, 3)
			got := h.committedIDs(3)
			if want := ids(1, 2, 3); !slices.Equal(got, want) {
				t.Errorf("committed %v, want %v", got, want)
			}
			if h.kafka.aborts != 1 || h.kafka.sinks != 2 {
				t.Errorf("%d aborts, %d sessions; want 1, 2", h.kafka.aborts, h.kafka.sinks)
			}
			if runs := h.src.starts(); len(runs) != 2 || runs[1].from != "0-1-1" {
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
			if h.Key == route.HeaderID && string(h.Value) == eventID(n) {
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
		h.src.txn(1, 1)
		h.run()
		h.committedIDs(1)
		h.src.rows(2, 2)
		h.settle()
		h.kafka.fence()
		h.src.end(2)
		err := h.wait()
		mustIs(t, err, ErrFenced)
		mustIs(t, err, kerr.InvalidProducerEpoch)
		if got := h.kafka.ids(); !slices.Equal(got, ids(1)) {
			t.Errorf("committed %v, want %v", got, ids(1))
		}
		if h.kafka.drops != 1 || h.kafka.aborts != 0 || h.kafka.sinks != 1 {
			t.Errorf("%d dropped, %d aborted transactions, %d sessions; want 1, 0, 1", h.kafka.drops, h.kafka.aborts, h.kafka.sinks)
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
				h.kafka.commitErr = func() (bool, error) {
					h.kafka.commitErr = nil
					return applied, lost
				}
				h.src.txn(1, 1, 2)
				h.src.txn(2, 3)
				h.run()
				h.await("a second session", func() bool { return len(h.src.starts()) == 2 })
				h.src.txn(3, 4)
				got := h.committedIDs(4)
				if want := ids(1, 2, 3, 4); !slices.Equal(got, want) {
					t.Errorf("committed %v, want %v", got, want)
				}
				wantFrom := map[bool]string{true: "0-1-2", false: ""}[applied]
				if from := h.src.starts()[1].from; from != wantFrom {
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
		h.src.txn(1, 1)
		h.run()
		h.committedIDs(1)
		h.kafka.mu.Lock()
		h.kafka.flushDelay = 11 * time.Second // paused in the commit
		h.kafka.mu.Unlock()
		h.src.txn(2, 2)
		got := h.committedIDs(2)
		if want := ids(1, 2); !slices.Equal(got, want) {
			t.Errorf("committed %v, want %v", got, want)
		}
		if h.kafka.drops != 1 || h.kafka.aborts != 0 {
			t.Errorf("%d dropped, %d aborted transactions; want 1, 0", h.kafka.drops, h.kafka.aborts)
		}
		if from := h.src.starts()[1].from; from != "0-1-1" {
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
		h.src.txn(1, 1)
		h.run()
		h.committedIDs(1)
		h.kafka.mu.Lock()
		h.kafka.stallFlush = true
		h.kafka.mu.Unlock()
		h.src.txn(2, 2)
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
		if got := h.kafka.ids(); !slices.Equal(got, ids(1)) {
			t.Errorf("committed %v, want %v", got, ids(1))
		}
		if h.kafka.aborts != 1 {
			t.Errorf("%d aborted transactions, want 1", h.kafka.aborts)
		}
		h.checkCommitted()
	})
}

// A flush that Kafka leaves waiting for --kafka-timeout, with no stop
// asked, names Kafka and --kafka-timeout, not the shutdown timeout.
func TestRelayKafkaStalledHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *Config) { c.KafkaTimeout = 10 * time.Second })
		h.src.txn(1, 1)
		h.run()
		h.committedIDs(1)
		h.kafka.mu.Lock()
		h.kafka.stallFlush = true
		h.kafka.mu.Unlock()
		h.src.txn(2, 2)
		err := h.wait()
		if err == nil || errors.Is(err, pipeline.ErrShutdownTimeout) {
			t.Fatalf("Run = %v, want Kafka's error", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "--kafka-timeout") || strings.Contains(msg, "--shutdown-timeout") {
			t.Errorf("error %q does not name --kafka-timeout, or names the shutdown timeout", msg)
		}
		if got := h.kafka.ids(); !slices.Equal(got, ids(1)) {
			t.Errorf("committed %v, want %v", got, ids(1))
		}
	})
}

// Transactions without outbox rows move the checkpoint every
// IdleCheckpoint, in a Kafka transaction of the checkpoint alone.
func TestRelayIdleCheckpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.src.txn(1)
		h.src.txn(2)
		h.run()
		time.Sleep(h.r.cfg.IdleCheckpoint - time.Millisecond)
		h.settle()
		if n := len(h.kafka.txns()); n != 0 {
			t.Fatalf("%d commits before --idle-checkpoint", n)
		}
		h.await("a checkpoint", func() bool { return len(h.kafka.txns()) == 1 })
		txn := h.kafka.txns()[0]
		if len(txn.ids) != 0 || txn.checkpoint.GTIDSet != "0-1-2" {
			t.Errorf("checkpoint-only transaction holds %v, checkpoint %s; want no records, 0-1-2", txn.ids, txn.checkpoint.GTIDSet)
		}
		if at := txn.at.Sub(h.start); at < h.r.cfg.IdleCheckpoint || at > h.r.cfg.IdleCheckpoint+h.r.cfg.CommitInterval {
			t.Errorf("checkpoint after %s, want --idle-checkpoint %s", at, h.r.cfg.IdleCheckpoint)
		}
		h.src.txn(3, 1)
		h.committedIDs(1)
		h.checkCommitted()
		mustNoError(t, "stop", h.stop())
	})
}

// An error with which the source stops is the source's: it is final
// unless the connection was lost, whatever its text says.
func TestRelaySourceErrorIsNotKafkas(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.src.fail = errors.New("outbox table app.outbox, transaction 0-1-7: connection reset in the payload")
		h.run()
		err := h.wait()
		if err == nil || !strings.Contains(err.Error(), "connection reset in the payload") || h.kafka.sinks != 1 {
			t.Fatalf("Run = %v after %d sessions; want the source's error after one", err, h.kafka.sinks)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.src.fail = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
		h.src.txn(1, 1)
		h.run()
		h.committedIDs(1)
		if h.kafka.sinks != 2 {
			t.Errorf("%d sessions, want a second after the lost connection", h.kafka.sinks)
		}
		mustNoError(t, "stop", h.stop())
	})
}

// logBuffer is a relay log that a test reads while the relay writes it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const stoppingLog = "stopping: finishing the current transaction"

// A stop inside a large binlog transaction is noticed when it is asked,
// in the middle of a batch and while Produce blocks; half ShutdownTimeout
// later the relay commits inside the transaction at once (not at the end
// of the batch, nor of the transaction) and returns nil: the stop takes
// half the timeout and one commit. The checkpoint names the position
// inside the transaction, and a new process resumes there without losing
// or repeating a row.
func TestRelayStopInsideTransaction(t *testing.T) {
	for _, delivery := range []Delivery{ExactlyOnce, AtLeastOnce} {
		t.Run(string(delivery), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log logBuffer
				h := newHarness(t, func(c *Config) {
					c.Delivery, c.CommitRecords, c.ShutdownTimeout = delivery, 20, 400*time.Millisecond
					c.Logger = zerolog.New(&log)
				})
				h.kafka.produceDelay = time.Millisecond // Produce blocks 1ms a record
				const n = 600
				var rows []int
				for i := 1; i <= n; i++ {
					rows = append(rows, i)
				}
				h.src.txn(1, rows...)
				h.src.txn(2, n+1)
				h.run()
				h.committedIDs(100) // a few commits into the transaction, inside a batch
				h.cancel()
				stopped := time.Now()
				h.settle()
				if !strings.Contains(log.String(), stoppingLog) {
					t.Errorf("no %q logged when the stop was asked (the relay is in Produce)", stoppingLog)
				}
				select {
				case <-h.exited:
					t.Fatalf("Run returned at once inside the transaction: %v", h.err)
				default:
				}
				mustNoError(t, "stop", h.wait())
				half := h.r.cfg.ShutdownTimeout / 2
				if took := time.Since(stopped); took < half || took > half+5*time.Millisecond {
					t.Errorf("the stop took %s, want half the shutdown timeout (%s) and one commit", took, half)
				}
				txns := h.kafka.txns()
				last := txns[len(txns)-1].checkpoint
				got := len(h.kafka.ids())
				if last.GTIDSet != "" || last.TxnGTID != "0-1-1" || last.TxnRows != got || got >= n {
					t.Errorf("last checkpoint %q + %s rows %d with %d records committed, want inside 0-1-1 at the records", last.GTIDSet, last.TxnGTID, last.TxnRows, got)
				}
				if !strings.Contains(log.String(), "stopping inside a binlog transaction") {
					t.Errorf("the commit inside the transaction is not logged:\n%s", log.String())
				}
				t.Logf("stopped in %s after %d of %d rows, in %d Kafka transactions", time.Since(stopped), got, n, len(txns))
				h.checkCommitted()

				h.restart()
				if got, want := h.committedIDs(n+1), ids(rows...); !slices.Equal(got[:n], want) || got[n] != eventID(n+1) {
					t.Errorf("after the restart committed %d records, want the %d rows once each in order", len(got), n+1)
				}
				h.checkCommitted()
				mustNoError(t, "stop", h.stop())
			})
		})
	}
}

// A stop asked while a batch of many small transactions is handled
// commits at the next transaction boundary inside the batch, without
// producing the rest of the batch.
func TestRelayStopAtBoundaryInsideBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log logBuffer
		h := newHarness(t, func(c *Config) {
			c.CommitRecords, c.ShutdownTimeout = 20, 400*time.Millisecond
			c.Logger = zerolog.New(&log)
		})
		h.kafka.produceDelay = time.Millisecond
		const n = 600
		for i := 1; i <= n; i++ {
			h.src.txn(i, i)
		}
		h.run()
		h.committedIDs(100)
		h.cancel()
		stopped := time.Now()
		mustNoError(t, "stop", h.wait())
		// The row in Produce, the checkpoint record: 1ms each.
		if took := time.Since(stopped); took > 5*time.Millisecond {
			t.Errorf("the stop took %s at a transaction boundary, want one commit", took)
		}
		got := len(h.kafka.ids())
		txns := h.kafka.txns()
		last := txns[len(txns)-1].checkpoint
		if got >= n || last.GTIDSet != mariaGTID(got) || last.TxnGTID != "" {
			t.Errorf("%d of %d rows committed, last checkpoint %s (txn %q): want a boundary before the end of the batch", got, n, last.GTIDSet, last.TxnGTID)
		}
		if !strings.Contains(log.String(), stoppingLog) {
			t.Errorf("no %q logged", stoppingLog)
		}
		h.checkCommitted()
		h.restart()
		h.committedIDs(n)
		h.checkCommitted()
		mustNoError(t, "stop", h.stop())
	})
}

package pipeline

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/pipeline/pipelinetest"
)

// A Kafka transaction holds at most CommitRecords records: the commit
// comes before the row that would exceed it, also inside a binlog
// transaction, with a checkpoint naming the position there.
func TestLiveCommitsByCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *setup) { c.CommitRecords = 3 })
		for i := 1; i <= 7; i++ {
			h.Src.Txn(i, i)
		}
		h.Src.Txn(8, 8, 9, 10, 11) // split inside: 7 8 9 | 10 11
		h.run()
		got := h.CommittedIDs(11)
		if want := pipelinetest.IDs(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11); !slices.Equal(got, want) {
			t.Fatalf("committed %v, want %v", got, want)
		}
		if got := pipelinetest.Sizes(h.Kafka.Txns()); !slices.Equal(got, []int{3, 3, 3, 2}) {
			t.Errorf("Kafka transactions of %v records, want [3 3 3 2]", got)
		}
		h.CheckCommitted()
		if cp := h.Kafka.Txns()[2].Checkpoint; cp.GTIDSet != "0-1-7" || cp.TxnGTID != "0-1-8" || cp.TxnRows != 2 {
			t.Errorf("checkpoint inside 0-1-8: %s + %s rows %d, want 0-1-7 + 0-1-8 rows 2", cp.GTIDSet, cp.TxnGTID, cp.TxnRows)
		}
		mustNoError(t, "stop", h.Stop())
	})
}

// Under a backlog, a Kafka transaction is committed at the first
// binlog transaction boundary once it is CommitInterval old.
func TestLiveCommitsByInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *setup) { c.QueueRows = 8 })
		h.Kafka.ProduceDelay = time.Millisecond // Kafka takes 1000 records a second
		const n = 400
		for i := 1; i <= n; i++ {
			h.Src.Txn(i, i)
		}
		h.run()
		h.CommittedIDs(n)
		h.CheckCommitted()
		txns := h.Kafka.Txns()
		t.Logf("Kafka transactions of %v records", pipelinetest.Sizes(txns))
		for i, txn := range txns {
			// 100ms of records: the commit comes before the next
			// transaction's row.
			if len(txn.IDs) > 101 {
				t.Errorf("Kafka transaction %d holds %d records: more than --commit-interval (100ms at 1ms a record) allows; transactions of %v records",
					i, len(txn.IDs), pipelinetest.Sizes(txns))
				break
			}
		}
		if len(txns) < n/101 {
			t.Errorf("%d Kafka transactions for %d records at 1ms each, want one per 100ms", len(txns), n)
		}
		mustNoError(t, "stop", h.Stop())
	})
}

// When the source has nothing more the open Kafka transaction is
// committed, CommitLinger after the previous commit at the latest.
func TestLiveCommitsWhenIdle(t *testing.T) {
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		t.Run(delivery, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, func(c *setup) { c.transactional = delivery == "exactly-once" })
				h.Src.Txn(1, 1, 2)
				h.run()
				h.CommittedIDs(2)
				if at := h.Kafka.Txns()[0].At.Sub(h.Start); at != 2*time.Millisecond {
					t.Errorf("committed %s after the start, want the 2ms linger", at)
				}
				h.Src.Txn(2, 3)
				h.CommittedIDs(3)
				h.CheckCommitted()
				if got := pipelinetest.Sizes(h.Kafka.Txns()); !slices.Equal(got, []int{2, 1}) {
					t.Errorf("Kafka transactions of %v records, want [2 1]", got)
				}
				if cp := h.Kafka.Txns()[1].Checkpoint; cp.GTIDSet != "0-1-2" || cp.TxnGTID != "" {
					t.Errorf("last checkpoint %s (txn %q), want 0-1-2 at a boundary", cp.GTIDSet, cp.TxnGTID)
				}
				mustNoError(t, "stop", h.Stop())
			})
		})
	}
}

// Transactions that come within CommitLinger of the previous commit share
// the next Kafka transaction, committed when the linger has passed.
func TestLiveLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.Src.Txn(1, 1)
		h.run()
		h.CommittedIDs(1)
		first := h.Kafka.Txns()[0].At
		time.Sleep(time.Until(first.Add(500 * time.Microsecond)))
		h.Src.Txn(2, 2)
		h.Settle()
		time.Sleep(time.Until(first.Add(1500 * time.Microsecond)))
		h.Src.Txn(3, 3)
		h.Settle()
		if n := len(h.Kafka.Txns()); n != 1 {
			t.Fatalf("%d Kafka transactions 1ms after the first commit, want 1: the linger holds the idle commit", n)
		}
		h.CommittedIDs(3)
		txns := h.Kafka.Txns()
		if got := pipelinetest.Sizes(txns); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("Kafka transactions of %v records, want [1 2]", got)
		}
		if gap := txns[1].At.Sub(first); gap != 2*time.Millisecond {
			t.Errorf("second commit %s after the first, want the 2ms linger", gap)
		}
		h.CheckCommitted()

		// Once the linger has passed, an idle commit is immediate.
		time.Sleep(time.Second)
		h.Src.Txn(4, 4)
		before := time.Now()
		h.CommittedIDs(4)
		if at := h.Kafka.Txns()[2].At; !at.Equal(before) {
			t.Errorf("commit %s after the transaction, want at once", at.Sub(before))
		}
		mustNoError(t, "stop", h.Stop())
	})
}

// A batch that ends inside a binlog transaction is not committed at a
// boundary; the transaction is committed when it ends, or in parts when
// the Kafka transaction reaches half the transaction timeout, and a new
// process resumes inside it without repeating a row.
func TestLiveBatchEndsInsideTransaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *setup) { c.TransactionTimeout = 10 * time.Second })
		h.Src.Txn(1, 1)
		h.run()
		h.CommittedIDs(1)
		h.Src.Rows(2, 2, 3)
		time.Sleep(time.Second)
		h.Settle()
		if got := h.Kafka.IDs(); !slices.Equal(got, pipelinetest.IDs(1)) {
			t.Fatalf("committed %v inside transaction 0-1-2, want only %v", got, pipelinetest.IDs(1))
		}
		h.Src.End(2)
		h.CommittedIDs(3)
		if cp := h.Kafka.Txns()[1].Checkpoint; cp.GTIDSet != "0-1-2" || cp.TxnGTID != "" {
			t.Errorf("checkpoint %s (txn %q), want 0-1-2", cp.GTIDSet, cp.TxnGTID)
		}

		// Half the transaction timeout into a binlog transaction its rows
		// so far are committed, with a checkpoint inside it.
		h.Src.Rows(3, 4, 5)
		begun := time.Now()
		h.CommittedIDs(5)
		txns := h.Kafka.Txns()
		cp := txns[2].Checkpoint
		if cp.GTIDSet != "0-1-2" || cp.TxnGTID != "0-1-3" || cp.TxnRows != 2 {
			t.Errorf("checkpoint %s + %s rows %d, want 0-1-2 + 0-1-3 rows 2", cp.GTIDSet, cp.TxnGTID, cp.TxnRows)
		}
		if age := txns[2].At.Sub(begun); age < 5*time.Second || age > 5*time.Second+200*time.Millisecond {
			t.Errorf("committed %s into the transaction, want half the transaction timeout (5s)", age)
		}
		h.CheckCommitted()
		mustNoError(t, "stop", h.Stop())

		// A new process resumes inside 0-1-3: its first two rows are not
		// produced again.
		h.Src.Rows(3, 6)
		h.Src.End(3)
		h.restart()
		h.CommittedIDs(6)
		runs := h.Src.Starts()
		if last := runs[len(runs)-1]; last.From != "0-1-2" || last.Resume.GTID != "0-1-3" || last.Resume.Rows != 2 {
			t.Errorf("resumed from %+v, want 0-1-2 inside 0-1-3 after 2 rows", last)
		}
		h.CheckCommitted()
		mustNoError(t, "stop", h.Stop())
	})
}

// A flush that Kafka leaves waiting for --kafka-timeout, with no stop
// asked, names Kafka and --kafka-timeout, not the shutdown timeout.
func TestLiveKafkaStalledHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, func(c *setup) { c.KafkaTimeout = 10 * time.Second })
		h.Src.Txn(1, 1)
		h.run()
		h.CommittedIDs(1)
		h.Kafka.Mu.Lock()
		h.Kafka.StallFlush = true
		h.Kafka.Mu.Unlock()
		h.Src.Txn(2, 2)
		err := h.Wait()
		if err == nil || errors.Is(err, ErrShutdownTimeout) {
			t.Fatalf("Run = %v, want Kafka's error", err)
		}
		if msg := err.Error(); !strings.Contains(msg, "--kafka-timeout") || strings.Contains(msg, "--shutdown-timeout") {
			t.Errorf("error %q does not name --kafka-timeout, or names the shutdown timeout", msg)
		}
		if got := h.Kafka.IDs(); !slices.Equal(got, pipelinetest.IDs(1)) {
			t.Errorf("committed %v, want %v", got, pipelinetest.IDs(1))
		}
	})
}

// Transactions without outbox rows move the checkpoint every
// IdleCheckpoint, in a Kafka transaction of the checkpoint alone.
func TestLiveIdleCheckpoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, nil)
		h.Src.Txn(1)
		h.Src.Txn(2)
		h.run()
		time.Sleep(h.set.IdleCheckpoint - time.Millisecond)
		h.Settle()
		if n := len(h.Kafka.Txns()); n != 0 {
			t.Fatalf("%d commits before --idle-checkpoint", n)
		}
		h.Await("a checkpoint", func() bool { return len(h.Kafka.Txns()) == 1 })
		txn := h.Kafka.Txns()[0]
		if len(txn.IDs) != 0 || txn.Checkpoint.GTIDSet != "0-1-2" {
			t.Errorf("checkpoint-only transaction holds %v, checkpoint %s; want no records, 0-1-2", txn.IDs, txn.Checkpoint.GTIDSet)
		}
		if at := txn.At.Sub(h.Start); at < h.set.IdleCheckpoint || at > h.set.IdleCheckpoint+h.set.CommitInterval {
			t.Errorf("checkpoint after %s, want --idle-checkpoint %s", at, h.set.IdleCheckpoint)
		}
		h.Src.Txn(3, 1)
		h.CommittedIDs(1)
		h.CheckCommitted()
		mustNoError(t, "stop", h.Stop())
	})
}

// logBuffer is a log that a test reads while the loop writes it.
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
// later the loop commits inside the transaction at once (not at the end
// of the batch, nor of the transaction) and returns nil: the stop takes
// half the timeout and one commit. The checkpoint names the position
// inside the transaction, and a new process resumes there without losing
// or repeating a row.
func TestLiveStopInsideTransaction(t *testing.T) {
	for _, delivery := range []string{"exactly-once", "at-least-once"} {
		t.Run(delivery, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var log logBuffer
				h := newHarness(t, func(c *setup) {
					c.transactional, c.CommitRecords, c.ShutdownTimeout = delivery == "exactly-once", 20, 400*time.Millisecond
					c.Log = zerolog.New(&log)
				})
				h.Kafka.ProduceDelay = time.Millisecond // Produce blocks 1ms a record
				const n = 600
				var rows []int
				for i := 1; i <= n; i++ {
					rows = append(rows, i)
				}
				h.Src.Txn(1, rows...)
				h.Src.Txn(2, n+1)
				h.run()
				h.CommittedIDs(100) // a few commits into the transaction, inside a batch
				h.Cancel()
				stopped := time.Now()
				h.Settle()
				if !strings.Contains(log.String(), stoppingLog) {
					t.Errorf("no %q logged when the stop was asked (the loop is in Produce)", stoppingLog)
				}
				select {
				case <-h.Done():
					t.Fatalf("Run returned at once inside the transaction: %v", h.Err())
				default:
				}
				mustNoError(t, "stop", h.Wait())
				half := h.set.ShutdownTimeout / 2
				if took := time.Since(stopped); took < half || took > half+5*time.Millisecond {
					t.Errorf("the stop took %s, want half the shutdown timeout (%s) and one commit", took, half)
				}
				txns := h.Kafka.Txns()
				last := txns[len(txns)-1].Checkpoint
				got := len(h.Kafka.IDs())
				if last.GTIDSet != "" || last.TxnGTID != "0-1-1" || last.TxnRows != got || got >= n {
					t.Errorf("last checkpoint %q + %s rows %d with %d records committed, want inside 0-1-1 at the records", last.GTIDSet, last.TxnGTID, last.TxnRows, got)
				}
				if !strings.Contains(log.String(), "stopping inside a binlog transaction") {
					t.Errorf("the commit inside the transaction is not logged:\n%s", log.String())
				}
				t.Logf("stopped in %s after %d of %d rows, in %d Kafka transactions", time.Since(stopped), got, n, len(txns))
				h.CheckCommitted()

				h.restart()
				if got, want := h.CommittedIDs(n+1), pipelinetest.IDs(rows...); !slices.Equal(got[:n], want) || got[n] != pipelinetest.EventID(n+1) {
					t.Errorf("after the restart committed %d records, want the %d rows once each in order", len(got), n+1)
				}
				h.CheckCommitted()
				mustNoError(t, "stop", h.Stop())
			})
		})
	}
}

// A stop asked while a batch of many small transactions is handled
// commits at the next transaction boundary inside the batch, without
// producing the rest of the batch.
func TestLiveStopAtBoundaryInsideBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log logBuffer
		h := newHarness(t, func(c *setup) {
			c.CommitRecords, c.ShutdownTimeout = 20, 400*time.Millisecond
			c.Log = zerolog.New(&log)
		})
		h.Kafka.ProduceDelay = time.Millisecond
		const n = 600
		for i := 1; i <= n; i++ {
			h.Src.Txn(i, i)
		}
		h.run()
		h.CommittedIDs(100)
		h.Cancel()
		stopped := time.Now()
		mustNoError(t, "stop", h.Wait())
		// The row in Produce, the checkpoint record: 1ms each.
		if took := time.Since(stopped); took > 5*time.Millisecond {
			t.Errorf("the stop took %s at a transaction boundary, want one commit", took)
		}
		got := len(h.Kafka.IDs())
		txns := h.Kafka.Txns()
		last := txns[len(txns)-1].Checkpoint
		if got >= n || last.GTIDSet != pipelinetest.MariaGTID(got) || last.TxnGTID != "" {
			t.Errorf("%d of %d rows committed, last checkpoint %s (txn %q): want a boundary before the end of the batch", got, n, last.GTIDSet, last.TxnGTID)
		}
		if !strings.Contains(log.String(), stoppingLog) {
			t.Errorf("no %q logged", stoppingLog)
		}
		h.CheckCommitted()
		h.restart()
		h.CommittedIDs(n)
		h.CheckCommitted()
		mustNoError(t, "stop", h.Stop())
	})
}

package pipelinetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// Harness runs one loop — a live session, or a Relay's Run — over a
// Source and a Kafka inside a synctest bubble: time stands still until
// every goroutine waits, so intervals, lingers and timeouts are exact.
// Build it inside synctest.Test.
type Harness struct {
	T     *testing.T
	Src   *Source
	Kafka *Kafka
	Start time.Time // when the last Go began

	cancel context.CancelFunc
	exited chan struct{} // closed when the run returned
	err    error         // the run's error
}

// Go starts run; the test's end stops it.
func (h *Harness) Go(run func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	h.cancel, h.exited, h.Start = cancel, exited, time.Now()
	go func() {
		defer close(exited)
		h.err = run(ctx)
	}()
	h.T.Cleanup(func() {
		cancel()
		<-exited
	})
}

// Wait returns the run's error once it returned by itself; a run that
// goes on fails the test after a minute of bubble time.
func (h *Harness) Wait() error {
	h.T.Helper()
	select {
	case <-h.exited:
		return h.err
	case <-time.After(time.Minute):
		h.T.Fatalf("the run goes on; committed %v", h.Kafka.Txns())
		return nil
	}
}

// Done is closed when the run returned; Err is then its error.
func (h *Harness) Done() <-chan struct{} { return h.exited }

// Err is the run's error, once Done is closed.
func (h *Harness) Err() error { return h.err }

// Cancel cancels the run's context without waiting.
func (h *Harness) Cancel() { h.cancel() }

// Stop cancels the run and returns its error.
func (h *Harness) Stop() error {
	h.Cancel()
	return h.Wait()
}

// Settle lets every goroutine run until it waits.
func (h *Harness) Settle() { synctest.Wait() }

// Await waits, in bubble time, until cond holds; a loop that never gets
// there fails the test after a minute of bubble time, naming what the
// Kafka committed.
func (h *Harness) Await(what string, cond func() bool) {
	h.T.Helper()
	deadline := time.Now().Add(time.Minute)
	for synctest.Wait(); !cond(); synctest.Wait() {
		if time.Now().After(deadline) {
			h.T.Fatalf("waiting for %s: not after a minute; committed %v", what, h.Kafka.Txns())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// CommittedIDs waits (Await) until n event ids are committed and returns
// them.
func (h *Harness) CommittedIDs(n int) []string {
	h.T.Helper()
	h.Await(fmt.Sprintf("%d committed records", n), func() bool { return len(h.Kafka.IDs()) >= n })
	return h.Kafka.IDs()
}

// CheckCommitted checks every committed Kafka transaction
// (CheckCommitted).
func (h *Harness) CheckCommitted() {
	h.T.Helper()
	CheckCommitted(h.T, h.Src, h.Kafka)
}

// MustNoError fails the test when err is not nil.
func MustNoError(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// MustIs fails the test unless errors.Is(err, target).
func MustIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
}

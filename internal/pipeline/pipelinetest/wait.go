package pipelinetest

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// Await waits, in synctest bubble time, until cond holds; a loop that
// never gets there fails the test after a minute of bubble time, naming
// what k committed.
func Await(t testing.TB, k *Kafka, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for synctest.Wait(); !cond(); synctest.Wait() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not after a minute; committed %v", what, k.Txns())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// CommittedIDs waits (Await) until n event ids are committed to k and
// returns them.
func CommittedIDs(t testing.TB, k *Kafka, n int) []string {
	t.Helper()
	Await(t, k, fmt.Sprintf("%d committed records", n), func() bool { return len(k.IDs()) >= n })
	return k.IDs()
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

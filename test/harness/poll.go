package harness

import (
	"fmt"
	"testing"
	"time"
)

// Eventually polls cond every 20 ms until it holds or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := Poll(timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Poll waits, polling every 20 ms, until cond holds, and fails with an
// error once timeout has passed.
func Poll(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not reached within %s", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

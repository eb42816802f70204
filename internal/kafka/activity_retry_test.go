package kafka

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestRetryCoordinatorWaitsForACoordinator(t *testing.T) {
	calls := 0
	err := retryCoordinator(context.Background(), func() error {
		calls++
		if calls < 3 {
			return kerr.CoordinatorNotAvailable
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("got %v after %d calls, want nil after 3", err, calls)
	}
}

func TestRetryCoordinatorStopsAtAFinalError(t *testing.T) {
	calls := 0
	err := retryCoordinator(context.Background(), func() error {
		calls++
		return kerr.GroupAuthorizationFailed
	})
	if !errors.Is(err, kerr.GroupAuthorizationFailed) || calls != 1 {
		t.Fatalf("got %v after %d calls, want GROUP_AUTHORIZATION_FAILED after 1", err, calls)
	}
}

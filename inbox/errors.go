package inbox

import (
	"errors"
	"fmt"
)

// ErrMissingID is the error of a record without an "id" header under
// MissingIDReject.
var ErrMissingID = errors.New(`record has no "id" header; publish it with an event id, or set MissingID to inbox.MissingIDDerive`)

// HandlerError is an event that could not be handled: the handler (or the
// inbox insert, or the commit) failed on every attempt.
type HandlerError struct {
	EventID   string
	Topic     string
	Partition int32
	Offset    int64
	Attempts  int
	Err       error
}

func (e *HandlerError) Error() string {
	return fmt.Sprintf("inbox: event %s (%s/%d@%d) failed after %d attempts: %v",
		e.EventID, e.Topic, e.Partition, e.Offset, e.Attempts, e.Err)
}

func (e *HandlerError) Unwrap() error { return e.Err }

// errJoin describes a failure of what while handling err.
func errJoin(what string, err, cause error) error {
	return fmt.Errorf("%s after %w: %w", what, err, cause)
}

package outbox

import (
	"errors"
	"fmt"
)

// ErrInvalidEvent is wrapped by every *FieldError: an event that cannot be
// written as it is. Nothing was sent to the server.
var ErrInvalidEvent = errors.New("invalid outbox event")

// FieldError reports one Event field that cannot be written. Insert and
// InsertMany check every event before writing any, so a FieldError means
// the statement was not executed and the transaction is untouched.
type FieldError struct {
	Index  int    // position of the event in InsertMany's arguments; -1 for Insert
	Field  string // the Event field: "ID", "AggregateType", "AggregateID", "Type", "Payload", "SchemaVersion", "Traceparent" or "Headers"
	Reason string // what is wrong and how to fix it
	Err    error  // the underlying error, such as json.Marshal's; may be nil
}

func (e *FieldError) Error() string {
	msg := "outbox event"
	if e.Index >= 0 {
		msg = fmt.Sprintf("outbox event %d", e.Index)
	}
	msg += ": " + e.Field + " " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrInvalidEvent and, when set, the underlying error, so
// that errors.Is(err, ErrInvalidEvent) holds for every FieldError.
func (e *FieldError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidEvent}
	}
	return []error{ErrInvalidEvent, e.Err}
}

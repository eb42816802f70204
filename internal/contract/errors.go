package contract

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors of Check and CheckStrict, for errors.Is.
var (
	// ErrViolation: a payload does not satisfy its event type's contract
	// (Check returns a *Violation).
	ErrViolation = errors.New("payload violates its contract")
	// ErrMissing: with MissingFail, an event type has no contract (Check
	// returns a *MissingError).
	ErrMissing = errors.New("no contract for the event type")
	// ErrNotJSON: the payload given to CheckStrict is not JSON in UTF-8.
	ErrNotJSON = errors.New("payload is not JSON in UTF-8")
)

// Violation is a payload that does not satisfy its contract. It names
// where, so the writer of the event or of the contract can fix it.
type Violation struct {
	File         string // the contract's file, as under the directory given to Load
	InstancePath string // JSON Pointer of the failing value in the payload; "" is the whole payload
	Keyword      string // the schema keyword that failed ("required", "type", ...; "json" if the payload is not JSON)
	Message      string // what is wrong, as the JSON Schema library words it
	More         int    // how many other failures the payload has
}

// Error returns, for example, `payload violates contract
// contracts/order_created.json at instance path "/amount", keyword
// "type": got string, want number`.
func (v *Violation) Error() string {
	var b strings.Builder
	b.WriteString("payload violates contract ")
	b.WriteString(v.File)
	b.WriteString(" at instance path ")
	b.WriteString(strconv.Quote(v.InstancePath))
	b.WriteString(", keyword ")
	b.WriteString(strconv.Quote(v.Keyword))
	b.WriteString(": ")
	b.WriteString(v.Message)
	if v.More > 0 {
		b.WriteString(" (and ")
		b.WriteString(strconv.Itoa(v.More))
		b.WriteString(" more)")
	}
	return b.String()
}

// Unwrap returns ErrViolation.
func (v *Violation) Unwrap() error { return ErrViolation }

// MissingError is an event type with no contract under MissingFail.
type MissingError struct {
	Dir           string // the contracts directory
	EventType     string // the row's event type
	SchemaVersion string // the row's schema_version; "" when NULL or not mapped
}

// Error names the files that would be the contract and the flag that
// lets such rows through.
func (e *MissingError) Error() string {
	name := fileSafe(e.EventType)
	files := strconv.Quote(name + ".json")
	if v, ok := canonicalVersion(e.SchemaVersion); ok {
		files += " or " + strconv.Quote(name+".v"+v+".json")
	}
	return "no contract for event_type " + strconv.Quote(e.EventType) + " in " + e.Dir +
		": add " + files + ", or run with --contracts-missing=allow"
}

// Unwrap returns ErrMissing.
func (e *MissingError) Unwrap() error { return ErrMissing }

// fileSafe is s clipped for an error message.
func fileSafe(s string) string {
	const max = 100
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

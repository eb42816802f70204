package route

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/contract"
)

// Kind classifies a row error. Its values are stable: they are used as a
// metric label and may appear in alerts.
type Kind string

// The kinds of row error, one per sentinel error below.
const (
	KindNullAggregateID    Kind = "null_aggregate_id"
	KindNullEventType      Kind = "null_event_type"
	KindNullEventID        Kind = "null_event_id"
	KindInvalidEventID     Kind = "invalid_event_id"
	KindInvalidPayloadJSON Kind = "invalid_payload_json"
	KindInvalidHeaders     Kind = "invalid_headers"
	KindInvalidTopic       Kind = "invalid_topic"
	KindRecordTooLarge     Kind = "record_too_large"
	KindInvalidExtension   Kind = "invalid_extension"
	KindContractViolation  Kind = "contract_violation"
	KindContractMissing    Kind = "contract_missing"
)

// Sentinel errors, one per Kind, so that errors.Is works on a *RowError.
var (
	// ErrNullAggregateID: aggregate_id is NULL or empty. It is the Kafka key,
	// and without a key per-aggregate order cannot be kept.
	ErrNullAggregateID = errors.New("aggregate_id is NULL or empty")
	// ErrNullEventType: event_type is NULL or empty.
	ErrNullEventType = errors.New("event_type is NULL or empty")
	// ErrNullEventID: event_id is NULL or empty.
	ErrNullEventID = errors.New("event_id is NULL or empty")
	// ErrInvalidEventID: event_id is not a canonical UUID (Config.RequireUUID,
	// --require-uuid).
	ErrInvalidEventID = errors.New("event_id is not a UUID")
	// ErrInvalidPayloadJSON: payload is not valid JSON or not UTF-8
	// (Config.ValidateJSON, --validate-json).
	ErrInvalidPayloadJSON = errors.New("payload is not valid JSON")
	// ErrInvalidHeaders: the headers column is not a JSON object.
	ErrInvalidHeaders = errors.New("headers column is not a JSON object")
	// ErrInvalidTopic: the topic built from the template is not a legal
	// Kafka topic name. ValidTopic's errors wrap it too.
	ErrInvalidTopic = errors.New("invalid Kafka topic name")
	// ErrRecordTooLarge: the record built from the row is larger than the
	// producer may send to its topic (the relay checks its size against
	// the topic's limit: TooLarge).
	ErrRecordTooLarge = errors.New("record too large")
	// ErrInvalidExtension: with a CloudEvents envelope, a member of the
	// headers column cannot be an extension attribute (its name is not
	// lower-case letters and digits, is an attribute the router sets, or
	// is repeated).
	ErrInvalidExtension = errors.New("headers column member is not a valid CloudEvents extension attribute")
	// ErrContractViolation: the payload does not satisfy the JSON Schema
	// of its event type (Config.Contracts, --contracts-dir). It is
	// contract.ErrViolation; the message names the schema file, the
	// instance path and the keyword.
	ErrContractViolation = contract.ErrViolation
	// ErrContractMissing: the event type has no contract and
	// --contracts-missing is fail. It is contract.ErrMissing.
	ErrContractMissing = contract.ErrMissing

	// ErrInvalidTemplate: Config.TopicTemplate cannot be parsed. New returns
	// it (wrapped); it is a configuration error, never a row error.
	ErrInvalidTemplate = errors.New("invalid topic template")
)

// RowError reports an outbox row that cannot become a Kafka record. It names
// the row so an operator can find and fix it; retrying the same row gives the
// same error.
type RowError struct {
	Table   string // "database.table" of the outbox table
	GTID    string // GTID of the transaction holding the row; empty if unknown
	EventID string // event_id as stored; empty when NULL or empty
	Kind    Kind   // what is wrong, as a stable label
	Err     error  // the problem; errors.Is matches the Kind's sentinel
}

// Error returns, for example, `outbox row shop.outbox event_id=… gtid=0-1-42:
// aggregate_id is NULL; every outbox row needs an aggregate_id (it is the
// Kafka key)`.
func (e *RowError) Error() string {
	var b strings.Builder
	b.WriteString("outbox row ")
	b.WriteString(e.Table)
	b.WriteString(" event_id=")
	b.WriteString(display(e.EventID))
	b.WriteString(" gtid=")
	b.WriteString(display(e.GTID))
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString(string(e.Kind))
	}
	return b.String()
}

// Unwrap returns Err.
func (e *RowError) Unwrap() error { return e.Err }

// TooLarge is the row error of a row whose record is larger than its
// topic's batch limit; table is "database.table", detail says which limit
// (--max-message-bytes, the topic's max.message.bytes or the brokers'
// message.max.bytes) and how to raise it.
func TooLarge(table, gtid, eventID, detail string) *RowError {
	return &RowError{Table: table, GTID: gtid, EventID: eventID, Kind: KindRecordTooLarge,
		Err: newProblem(KindRecordTooLarge, ErrRecordTooLarge, detail)}
}

// problem is the Err of a RowError: a precise message over a sentinel.
type problem struct {
	kind Kind
	base error
	msg  string
}

func (p *problem) Error() string { return p.msg }
func (p *problem) Unwrap() error { return p.base }

func newProblem(kind Kind, base error, msg string) *problem {
	return &problem{kind: kind, base: base, msg: msg}
}

// display renders a value for an error message as a person reads it
// (binlog.Readable): plain when short printable ASCII without spaces
// (UUIDs, GTIDs), quoted and clipped text otherwise, UUID text for 16
// bytes that are not text, 0x hex for other bytes that are not text.
func display(s string) string { return binlog.Readable([]byte(s)) }

// quote quotes s for an error message, clipping it to maxShown bytes.
func quote(s string) string {
	if len(s) <= maxShown {
		return strconv.Quote(s)
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// maxShown bounds how much of a template or topic a message repeats.
const maxShown = 100

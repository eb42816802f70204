package outbox

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Event is one outbox row: one Kafka record once the router has read it.
type Event struct {
	// ID is the event id, the record's "id" header, unique in the table.
	// The zero UUID means a new time-ordered UUIDv7 (uuid.NewV7), so ids
	// sort by creation time. Consumers use it to drop duplicates.
	ID uuid.UUID

	// AggregateType names the kind of entity the event is about, such as
	// "order"; the "aggregate_type" header, and the topic with the
	// Debezium preset's template outbox.event.{aggregate_type}. Required.
	AggregateType string

	// AggregateID identifies the entity, such as an order number; it is
	// the Kafka key, so one aggregate's events share a partition and stay
	// in order. Required.
	AggregateID string

	// Type is the event type, such as "OrderCreated": the "event_type"
	// header and, with the default template outbox.event.{event_type}, the
	// topic. Required. With that template it may only use the characters
	// of a topic name: letters, digits, '.', '_' and '-'.
	Type string

	// Payload is the Kafka record value. A json.RawMessage or []byte that
	// holds valid JSON is written as it is; any other value, a string
	// included, is encoded with encoding/json (without HTML escaping). A nil
	// Payload writes SQL NULL: a record with a null value, a tombstone on a
	// compacted topic. A nil pointer is not nil here: it encodes as the
	// JSON text null.
	Payload any

	// SchemaVersion, when not nil, is the "schema_version" header. It must
	// fit the INT column (32 bits).
	SchemaVersion *int

	// Traceparent is a W3C trace context traceparent, the "traceparent"
	// header, so that consumers can continue the producer's trace; "" writes
	// NULL. It must be version-traceid-parentid-flags in lower-case hex,
	// 55 characters, e.g. 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01.
	// With OpenTelemetry, take it from the context that holds the span:
	//
	//	carrier := propagation.MapCarrier{}
	//	propagation.TraceContext{}.Inject(ctx, carrier)
	//	e.Traceparent = carrier.Get("traceparent") // "" when ctx has no valid span
	Traceparent string

	// Headers are extra Kafka headers, added after the router's own (they
	// never replace them), in key order. Keys must not be empty. A nil or
	// empty map writes NULL.
	Headers map[string]string
}

// row is an event checked and encoded into the values of its columns.
type row struct {
	id            uuid.UUID
	aggregateType string
	aggregateID   string
	eventType     string
	payload       any // string or nil
	schemaVersion any // int64 or nil
	traceparent   any // string or nil
	headers       any // string or nil
	size          int // bytes of all values, to bound a statement
}

// encode checks e against the writer's columns and encodes its values.
// index is the event's position for FieldError (-1 for Insert). A zero ID
// is left for the caller to fill.
func (w *Writer) encode(index int, e *Event) (row, error) {
	fail := func(field, reason string, err error) (row, error) {
		return row{}, &FieldError{Index: index, Field: field, Reason: reason, Err: err}
	}
	r := row{id: e.ID, aggregateType: e.AggregateType, aggregateID: e.AggregateID, eventType: e.Type}
	if err := checkText(e.AggregateType, "an aggregate type, such as \"order\""); err != "" {
		return fail("AggregateType", err, nil)
	}
	if err := checkText(e.AggregateID, "the id of the entity the event is about (it is the Kafka key)"); err != "" {
		return fail("AggregateID", err, nil)
	}
	if err := checkText(e.Type, "an event type, such as \"OrderCreated\""); err != "" {
		return fail("Type", err, nil)
	}
	r.size = len(e.AggregateType) + len(e.AggregateID) + len(e.Type) + 36

	if e.Payload != nil {
		p, reason, err := encodePayload(e.Payload)
		if reason != "" {
			return fail("Payload", reason, err)
		}
		r.payload = p
		r.size += len(p)
	}

	if e.SchemaVersion != nil {
		if w.cols.SchemaVersion == "" {
			return fail("SchemaVersion", noColumn("SchemaVersion"), nil)
		}
		v := *e.SchemaVersion
		if v < math.MinInt32 || v > math.MaxInt32 {
			return fail("SchemaVersion", "is out of the range of the INT column", nil)
		}
		r.schemaVersion = int64(v)
	}

	if e.Traceparent != "" {
		if w.cols.Traceparent == "" {
			return fail("Traceparent", noColumn("Traceparent"), nil)
		}
		if !validTraceparent(e.Traceparent) {
			return fail("Traceparent", "is not a W3C traceparent: want 55 characters of lower-case hex, "+
				"version-traceid-parentid-flags, such as 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01, "+
				"with non-zero trace and parent ids, or \"\" for none", nil)
		}
		r.traceparent = e.Traceparent
		r.size += len(e.Traceparent)
	}

	if len(e.Headers) > 0 {
		if w.cols.Headers == "" {
			return fail("Headers", noColumn("Headers"), nil)
		}
		for k, v := range e.Headers {
			if k == "" {
				return fail("Headers", "has an empty key; every header needs a name", nil)
			}
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return fail("Headers", "has a key or value that is not valid UTF-8", nil)
			}
		}
		h, err := marshal(e.Headers)
		if err != nil {
			return fail("Headers", "cannot be encoded as JSON", err)
		}
		r.headers = h
		r.size += len(h)
	}
	return r, nil
}

// checkText returns why s cannot be a required text column, or "".
func checkText(s, want string) string {
	switch {
	case s == "":
		return "is empty; set it to " + want
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	return ""
}

func noColumn(field string) string {
	return "is set but the writer's Columns." + field + " is empty; name the table's column in WithColumns, or add the column"
}

// encodePayload returns the JSON text of a non-nil payload, or why it has
// none (and the underlying error, if any).
func encodePayload(p any) (text, reason string, err error) {
	var raw []byte
	switch v := p.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		s, err := marshal(p)
		if err != nil {
			return "", "cannot be encoded as JSON", err
		}
		return s, "", nil
	}
	if len(raw) == 0 {
		return "", "is an empty byte slice, which is not JSON; use a nil Payload for a NULL value (a tombstone)", nil
	}
	if !json.Valid(raw) {
		return "", "holds bytes that are not valid JSON; pass JSON text, or a value to encode with encoding/json", nil
	}
	return string(raw), "", nil
}

// marshal is json.Marshal without HTML escaping: payloads go to Kafka, not
// into HTML, and "<" reads better than "\u003c".
func marshal(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

// validTraceparent reports whether s is a W3C traceparent the router can
// store in its VARCHAR(55) column: version-traceid-parentid-flags, lower-case
// hex, version not ff, trace and parent ids not all zeros.
func validTraceparent(s string) bool {
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	zero := func(h string) bool { return strings.Trim(h, "0") == "" }
	return s[:2] != "ff" && !zero(s[3:35]) && !zero(s[36:52])
}

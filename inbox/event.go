package inbox

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Header keys binlog-router (and Debezium's outbox event router) set.
// They are the router's own names (its internal route package), written
// here again because a public package must not depend on the router's
// internals; a test of the route package keeps the two equal.
const (
	HeaderID            = "id"
	HeaderEventType     = "event_type"
	HeaderAggregateType = "aggregate_type"
)

// Event is one Kafka record as the handler sees it.
type Event struct {
	// ID is the "id" header: the event id the inbox row is keyed by. With
	// MissingIDDerive it is "topic/partition/offset" for a record without
	// the header.
	ID string
	// Type is the "event_type" header ("" when absent).
	Type string
	// AggregateType is the "aggregate_type" header ("" when absent).
	AggregateType string
	// AggregateID is the record key.
	AggregateID string
	// Payload is the record value; nil for a tombstone.
	Payload []byte
	// Headers are all record headers, in order, including the above.
	Headers []kgo.RecordHeader
	// Timestamp is the record timestamp.
	Timestamp time.Time
	Topic     string
	Partition int32
	Offset    int64
}

// Header returns the value of the first header named key, and whether there
// is one.
func (e Event) Header(key string) (string, bool) {
	for _, h := range e.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

// newEvent builds the Event of r; hasID is false when r has no non-empty
// "id" header.
func newEvent(r *kgo.Record) (ev Event, hasID bool) {
	ev = Event{
		AggregateID: string(r.Key),
		Payload:     r.Value,
		Headers:     r.Headers,
		Timestamp:   r.Timestamp,
		Topic:       r.Topic,
		Partition:   r.Partition,
		Offset:      r.Offset,
	}
	ev.ID, _ = ev.Header(HeaderID)
	ev.Type, _ = ev.Header(HeaderEventType)
	ev.AggregateType, _ = ev.Header(HeaderAggregateType)
	return ev, ev.ID != ""
}

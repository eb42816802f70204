package inbox

import (
	"encoding/json"
	"strings"
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

// CloudEvents names: the Kafka protocol binding's headers (binary content
// mode) and the structured content mode's media type. binlog-router's
// --envelope cloudevents and cloudevents-structured write them besides the
// headers above.
const (
	HeaderCEID             = "ce_id"
	HeaderCEType           = "ce_type"
	HeaderCEAggregateType  = "ce_aggregatetype"
	HeaderContentType      = "content-type"
	ContentTypeCloudEvents = "application/cloudevents+json"
)

// Event is one Kafka record as the handler sees it.
type Event struct {
	// ID is the "id" header: the event id the inbox row is keyed by. A
	// CloudEvents record without it gives its id attribute: the ce_id
	// header (binary content mode), or the "id" member of an
	// application/cloudevents+json value (structured content mode). With
	// MissingIDDerive it is "topic/partition/offset" for a record without
	// any of these.
	ID string
	// Type is the "event_type" header, else the CloudEvents type attribute
	// (ce_type, or "type" of a structured value); "" when absent.
	Type string
	// AggregateType is the "aggregate_type" header, else the CloudEvents
	// aggregatetype extension binlog-router sets; "" when absent.
	AggregateType string
	// AggregateID is the record key.
	AggregateID string
	// Payload is the record value; nil for a tombstone. In the
	// CloudEvents structured content mode it is the whole event, data
	// and attributes.
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
	if ev.ID == "" || ev.Type == "" || ev.AggregateType == "" {
		ev.fromCloudEvent()
	}
	return ev, ev.ID != ""
}

// fromCloudEvent fills the ID, Type and AggregateType that are still
// empty from the record's CloudEvents attributes: the structured value
// when content-type says the record is application/cloudevents+json (a
// value that is not a JSON object gives nothing), else the ce_ headers.
func (ev *Event) fromCloudEvent() {
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	if ct, _ := ev.Header(HeaderContentType); isCloudEventsJSON(ct) {
		var attrs struct {
			ID            string `json:"id"`
			Type          string `json:"type"`
			AggregateType string `json:"aggregatetype"`
		}
		if json.Unmarshal(ev.Payload, &attrs) == nil {
			fill(&ev.ID, attrs.ID)
			fill(&ev.Type, attrs.Type)
			fill(&ev.AggregateType, attrs.AggregateType)
		}
		return
	}
	id, _ := ev.Header(HeaderCEID)
	typ, _ := ev.Header(HeaderCEType)
	aggType, _ := ev.Header(HeaderCEAggregateType)
	fill(&ev.ID, id)
	fill(&ev.Type, typ)
	fill(&ev.AggregateType, aggType)
}

// isCloudEventsJSON reports whether the media type ct, parameters aside,
// is application/cloudevents+json.
func isCloudEventsJSON(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), ContentTypeCloudEvents)
}

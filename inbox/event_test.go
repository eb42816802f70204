package inbox

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/route"
)

// TestEventFromCloudEvents builds records the router's way in each
// envelope and checks that the inbox finds the event id, type and
// aggregate type: from the router's own headers, and from the CloudEvents
// attributes alone when those headers are absent (a record from another
// CloudEvents producer).
func TestEventFromCloudEvents(t *testing.T) {
	const id = "3f2c8a4e-9b1d-4c6e-8f0a-1b2c3d4e5f60"
	for _, env := range route.Envelopes {
		r, err := route.New(route.Config{Envelope: env, ValidateJSON: true, RequireUUID: true})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Route(&binlog.OutboxRow{Database: "shop", Table: "outbox", EventID: []byte(id),
			AggregateType: []byte("order"), AggregateID: []byte("order-1"), EventType: []byte("OrderCreated"),
			Payload: []byte(`{"id":"not the event id","type":"nor the type"}`)}, &binlog.Txn{GTID: "0-1-1"})
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, rec *kgo.Record, wantID bool) {
			t.Helper()
			ev, hasID := newEvent(rec)
			if !wantID {
				if hasID || ev.ID != "" {
					t.Errorf("%s %s: id %q, want none", env, what, ev.ID)
				}
				return
			}
			if !hasID || ev.ID != id || ev.Type != "OrderCreated" || ev.AggregateType != "order" || ev.AggregateID != "order-1" {
				t.Errorf("%s %s: id %q (found %v), type %q, aggregate %q/%q", env, what, ev.ID, hasID, ev.Type, ev.AggregateType, ev.AggregateID)
			}
		}
		check("as routed", rec, true)

		foreign := *rec
		foreign.Headers = nil
		for _, h := range rec.Headers {
			switch h.Key {
			case route.HeaderID, route.HeaderEventType, route.HeaderAggregateType:
			default:
				foreign.Headers = append(foreign.Headers, h)
			}
		}
		check("without the router's headers", &foreign, env != route.EnvelopePlain)

		if env == route.EnvelopeCloudEventsStructured {
			broken := foreign
			broken.Value = []byte(`{"id": 7}`)
			check("with an id that is not a string", &broken, false)
			params := foreign
			params.Headers = append([]kgo.RecordHeader{{Key: "content-type", Value: []byte("Application/CloudEvents+JSON; charset=utf-8")}}, foreign.Headers...)
			check("with media type parameters", &params, true)
		}
	}
}

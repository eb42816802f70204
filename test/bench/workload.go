package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/google/uuid"
)

// eventType is one of the ten event types of the workload; the topic
// template routes each to its own topic.
type eventType struct {
	Name, Aggregate string
}

var eventTypes = []eventType{
	{"OrderCreated", "Order"}, {"OrderPaid", "Order"}, {"OrderShipped", "Order"}, {"OrderCancelled", "Order"},
	{"PaymentAuthorized", "Payment"}, {"PaymentCaptured", "Payment"}, {"PaymentRefunded", "Payment"},
	{"CustomerRegistered", "Customer"}, {"CustomerUpdated", "Customer"}, {"AddressChanged", "Customer"},
}

// outboxEvent is one outbox row as the workload writes it.
type outboxEvent struct {
	ID, AggregateType, AggregateID, EventType string
	Payload                                   []byte
}

// eventGen makes outbox events: aggregate ids Zipf distributed over a
// fixed population (a few hot aggregates, a long tail), event types
// uniform, JSON payloads of about payloadBytes (+-jitter). Deterministic for
// a seed; not safe for concurrent use.
type eventGen struct {
	rng          *rand.Rand
	zipf         *rand.Zipf
	payloadBytes int
	jitter       float64
}

// newEventGen returns a generator for one stream of a seed: streams of one
// seed give disjoint event ids.
func newEventGen(seed, stream uint64, aggregates, payloadBytes int, jitter float64) *eventGen {
	rng := rand.New(rand.NewPCG(seed, stream*0x9e3779b97f4a7c15+1))
	return &eventGen{
		rng:          rng,
		zipf:         rand.NewZipf(rng, 1.1, 1, uint64(aggregates-1)),
		payloadBytes: payloadBytes,
		jitter:       jitter,
	}
}

func (g *eventGen) next() outboxEvent {
	t := eventTypes[g.rng.IntN(len(eventTypes))]
	id := g.uuid()
	agg := fmt.Sprintf("agg-%05d", g.zipf.Uint64())
	size := g.payloadBytes
	if g.jitter > 0 {
		size = int(float64(size) * (1 - g.jitter + 2*g.jitter*g.rng.Float64()))
	}
	return outboxEvent{ID: id, AggregateType: t.Aggregate, AggregateID: agg, EventType: t.Name,
		Payload: g.payload(id, agg, t.Name, size)}
}

// uuid returns a random (version 4) UUID drawn from the generator.
func (g *eventGen) uuid() string {
	var u uuid.UUID
	for i := 0; i < 16; i += 8 {
		v := g.rng.Uint64()
		for j := range 8 {
			u[i+j] = byte(v >> (8 * j))
		}
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u.String()
}

// fillAlphabet has 64 characters, so one random uint64 fills 10 bytes.
const fillAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -"

// payload is a JSON object of exactly size bytes (or its fixed part, when
// that is longer), with only characters that need no escaping in JSON or
// SQL string literals.
func (g *eventGen) payload(id, agg, typ string, size int) []byte {
	b := make([]byte, 0, max(size, 256))
	b = fmt.Appendf(b, `{"event_id":"%s","aggregate_id":"%s","type":"%s","amount":%d,"currency":"EUR","items":[{"sku":"SKU-%04d","qty":%d},{"sku":"SKU-%04d","qty":%d}],"note":"`,
		id, agg, typ, g.rng.IntN(1000000), g.rng.IntN(10000), 1+g.rng.IntN(5), g.rng.IntN(10000), 1+g.rng.IntN(5))
	for len(b) < size-2 {
		v := g.rng.Uint64()
		for i := 0; i < 10 && len(b) < size-2; i++ {
			b = append(b, fillAlphabet[v&63])
			v >>= 6
		}
	}
	return append(b, `"}`...)
}

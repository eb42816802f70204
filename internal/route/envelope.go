package route

import (
	"errors"
	"fmt"
)

// Envelope is how a record carries its event (--envelope).
type Envelope string

// The envelopes.
const (
	// EnvelopePlain is the record of the package documentation: the
	// payload as the value, the router's own headers.
	EnvelopePlain Envelope = "plain"
	// EnvelopeCloudEvents is the CloudEvents 1.0 Kafka protocol binding in
	// binary content mode: the plain record plus ce_* headers and
	// content-type.
	EnvelopeCloudEvents Envelope = "cloudevents"
	// EnvelopeCloudEventsStructured is the Kafka protocol binding in
	// structured content mode: the value is the event in the CloudEvents
	// JSON format (application/cloudevents+json), the plain headers stay.
	EnvelopeCloudEventsStructured Envelope = "cloudevents-structured"
)

// DefaultEnvelope is the envelope of a zero Config.Envelope.
const DefaultEnvelope = EnvelopePlain

// Envelopes lists the envelopes in the order the documentation gives them.
var Envelopes = []Envelope{EnvelopePlain, EnvelopeCloudEvents, EnvelopeCloudEventsStructured}

// ErrInvalidEnvelope: Config.Envelope or Config.CloudEventsSource cannot
// be used. New returns it (wrapped); it is a configuration error, never a
// row error.
var ErrInvalidEnvelope = errors.New("invalid envelope setting")

// ParseEnvelope returns the Envelope named s; "" is DefaultEnvelope.
func ParseEnvelope(s string) (Envelope, error) {
	if s == "" {
		return DefaultEnvelope, nil
	}
	for _, e := range Envelopes {
		if string(e) == s {
			return e, nil
		}
	}
	return "", fmt.Errorf("%w: --envelope %q: use plain, cloudevents or cloudevents-structured", ErrInvalidEnvelope, s)
}

// cloudEvents reports whether e is one of the CloudEvents envelopes.
func (e Envelope) cloudEvents() bool {
	return e == EnvelopeCloudEvents || e == EnvelopeCloudEventsStructured
}

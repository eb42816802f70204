// Package cetest reads Kafka records as CloudEvents with the CloudEvents
// Go SDK (github.com/cloudevents/sdk-go/v2), for tests: an independent
// reader of the router's CloudEvents envelopes. The SDK's own Kafka
// bindings wrap Sarama or the Confluent client; this package is the same
// small adapter over a franz-go record, so that the SDK, not the router's
// code, parses headers, attributes and the structured format.
package cetest

import (
	"bytes"
	"context"
	"strings"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/binding/format"
	"github.com/cloudevents/sdk-go/v2/binding/spec"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The Kafka protocol binding's names: attribute headers are "ce_" and the
// attribute name; datacontenttype, and the structured mode's media type,
// travel as content-type.
const (
	headerPrefix      = "ce_"
	contentTypeHeader = "content-type"
)

var versions = spec.WithPrefix(headerPrefix)

// ToEvent decodes r as the SDK's Kafka bindings do: structured content mode
// when content-type names an event format (application/cloudevents+json),
// binary content mode when a ce_specversion header names a known version.
// It returns binding.ErrUnknownEncoding for a record that is neither, and
// the SDK's error for an event it rejects (a missing required attribute, a
// malformed time or source, bad JSON).
func ToEvent(ctx context.Context, r *kgo.Record) (*event.Event, error) {
	return binding.ToEvent(ctx, newMessage(r))
}

// message is a binding.MessageReader over a record.
type message struct {
	r       *kgo.Record
	format  format.Format // structured mode
	version spec.Version  // binary mode
}

var (
	_ binding.MessageReader         = (*message)(nil)
	_ binding.MessageMetadataReader = (*message)(nil)
)

func newMessage(r *kgo.Record) *message {
	m := &message{r: r}
	var contentType, specVersion string
	for _, h := range r.Headers {
		switch strings.ToLower(h.Key) {
		case contentTypeHeader:
			contentType = string(h.Value)
		case versions.PrefixedSpecVersionName():
			specVersion = string(h.Value)
		}
	}
	if f := format.Lookup(contentType); f != nil {
		m.format = f
	} else {
		m.version = versions.Version(specVersion)
	}
	return m
}

// ReadEncoding says which content mode the record is in.
func (m *message) ReadEncoding() binding.Encoding {
	switch {
	case m.format != nil:
		return binding.EncodingStructured
	case m.version != nil:
		return binding.EncodingBinary
	}
	return binding.EncodingUnknown
}

// ReadStructured hands the value to the event format.
func (m *message) ReadStructured(ctx context.Context, w binding.StructuredWriter) error {
	if m.format == nil {
		return binding.ErrNotStructured
	}
	return w.SetStructuredEvent(ctx, m.format, bytes.NewReader(m.r.Value))
}

// ReadBinary hands every ce_ header to the writer as an attribute or an
// extension, content-type as datacontenttype, and the value as the data.
func (m *message) ReadBinary(ctx context.Context, w binding.BinaryWriter) error {
	if m.version == nil {
		return binding.ErrNotBinary
	}
	for _, h := range m.r.Headers {
		k := strings.ToLower(h.Key)
		var err error
		switch {
		case strings.HasPrefix(k, headerPrefix):
			if a := m.version.Attribute(k); a != nil {
				err = w.SetAttribute(a, string(h.Value))
			} else {
				err = w.SetExtension(strings.TrimPrefix(k, headerPrefix), string(h.Value))
			}
		case k == contentTypeHeader:
			err = w.SetAttribute(m.version.AttributeFromKind(spec.DataContentType), string(h.Value))
		}
		if err != nil {
			return err
		}
	}
	if m.r.Value != nil {
		return w.SetData(bytes.NewReader(m.r.Value))
	}
	return nil
}

// GetAttribute returns the binary-mode header of attribute kind k, nil
// when absent.
func (m *message) GetAttribute(k spec.Kind) (spec.Attribute, interface{}) {
	if m.version == nil {
		return nil, nil
	}
	a := m.version.AttributeFromKind(k)
	if a == nil {
		return nil, nil
	}
	name := a.PrefixedName()
	if k == spec.DataContentType {
		name = contentTypeHeader
	}
	if v, ok := m.header(name); ok {
		return a, v
	}
	return a, nil
}

// GetExtension returns the binary-mode header of extension name, nil
// when absent.
func (m *message) GetExtension(name string) interface{} {
	if v, ok := m.header(headerPrefix + name); ok {
		return v
	}
	return nil
}

func (m *message) header(key string) (string, bool) {
	for _, h := range m.r.Headers {
		if strings.EqualFold(h.Key, key) {
			return string(h.Value), true
		}
	}
	return "", false
}

// Finish does nothing: a record holds no resources.
func (m *message) Finish(error) error { return nil }

package route

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

// structuredValue returns the CloudEvents structured content mode value
// of row: one JSON object (the CloudEvents JSON format) with specversion,
// id, source, type, time (when ts is not zero), subject, the extensions,
// and the payload: a JSON payload as the data member as it is, a text
// payload as data holding a JSON string, a binary payload as
// data_base64; a NULL payload gives no data member and no
// datacontenttype. Attribute and text values that are not UTF-8 have
// their bad bytes replaced by U+FFFD, as JSON text must be UTF-8.
func (r *Router) structuredValue(row *binlog.OutboxRow, ts time.Time, members []kgo.RecordHeader) []byte {
	size := 160 + len(row.EventID) + len(row.EventType) + len(row.AggregateID) + len(row.AggregateType) +
		len(row.SchemaVersion) + len(row.Traceparent) + len(row.Payload)*4/3
	for _, m := range members {
		size += len(m.Key) + len(m.Value) + 8
	}
	b := make([]byte, 0, size)
	b = append(b, `{"specversion":"`+CloudEventsSpecVersion+`","id":`...)
	b = appendJSONString(b, row.EventID)
	b = append(b, `,"source":`...)
	b = appendJSONString(b, r.source(row.Database, row.Table))
	b = append(b, `,"type":`...)
	b = appendJSONString(b, row.EventType)
	if !ts.IsZero() {
		b = append(b, `,"time":"`...)
		b = appendTime(b, ts)
		b = append(b, '"')
	}
	b = append(b, `,"subject":`...)
	b = appendJSONString(b, row.AggregateID)
	b = appendMember(b, ExtAggregateType, row.AggregateType)
	b = appendMember(b, ExtSchemaVersion, row.SchemaVersion)
	b = appendMember(b, ExtTraceparent, row.Traceparent)
	for _, m := range members {
		b = appendMember(b, m.Key, m.Value)
	}
	if row.Payload != nil {
		kind := r.payloadKind(row)
		b = append(b, `,"datacontenttype":"`...)
		b = append(b, contentTypeBytes[kind]...)
		switch kind {
		case payloadJSON:
			b = append(b, `","data":`...)
			b = append(b, row.Payload...)
		case payloadText:
			b = append(b, `","data":`...)
			b = appendJSONString(b, row.Payload)
		default:
			b = append(b, `","data_base64":"`...)
			b = base64.StdEncoding.AppendEncode(b, row.Payload)
			b = append(b, '"')
		}
	}
	return append(b, '}')
}

// appendMember appends `,"name":"value"` when value is not nil.
func appendMember(b []byte, name string, value []byte) []byte {
	if value == nil {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, name...) // a valid attribute name: a-z, 0-9
	b = append(b, `":`...)
	return appendJSONString(b, value)
}

// appendJSONString appends s as a JSON string: '"', '\\' and control
// characters escaped, bytes that are not UTF-8 as U+FFFD, everything else
// as it is (no HTML escaping).
func appendJSONString(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += n
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

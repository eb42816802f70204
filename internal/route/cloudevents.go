package route

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/jsonscan"
)

// Header keys of the CloudEvents Kafka protocol binding (binary content
// mode): "ce_" and the attribute name, and content-type for the
// datacontenttype attribute.
const (
	HeaderCEPrefix      = "ce_"
	HeaderCESpecVersion = "ce_specversion"
	HeaderCEID          = "ce_id"
	HeaderCESource      = "ce_source"
	HeaderCEType        = "ce_type"
	HeaderCETime        = "ce_time"
	HeaderCESubject     = "ce_subject"
	HeaderContentType   = "content-type"
)

// Extension attributes the router sets from its optional columns.
// traceparent is the distributed-tracing extension's attribute.
const (
	ExtAggregateType = "aggregatetype"
	ExtSchemaVersion = "schemaversion"
	ExtTraceparent   = "traceparent"
)

// Content types of the CloudEvents envelopes.
const (
	ContentTypeJSON        = "application/json"
	ContentTypeText        = "text/plain; charset=utf-8"
	ContentTypeBinary      = "application/octet-stream"
	ContentTypeCloudEvents = "application/cloudevents+json"
)

// CloudEventsSpecVersion is the specversion attribute of every event.
const CloudEventsSpecVersion = "1.0"

// Constant header values, shared by every record; nobody may write to a
// record's header values.
var (
	specVersionBytes = []byte(CloudEventsSpecVersion)
	contentTypeBytes = [...][]byte{
		payloadJSON:   []byte(ContentTypeJSON),
		payloadText:   []byte(ContentTypeText),
		payloadBinary: []byte(ContentTypeBinary),
	}
	cloudEventsContentType = []byte(ContentTypeCloudEvents)
)

// payloadKind is what a payload is, as a CloudEvents data content type.
type payloadKind uint8

const (
	payloadJSON payloadKind = iota
	payloadText
	payloadBinary
)

// payloadKind says what row's non-NULL payload is: bytes of a binary
// column (binlog.OutboxRow.PayloadBinary) are binary unless ValidateJSON
// has proved them JSON; text is JSON when ValidateJSON has proved it or
// it parses as JSON, plain text otherwise.
func (r *Router) payloadKind(row *binlog.OutboxRow) payloadKind {
	switch {
	case r.cfg.ValidateJSON:
		return payloadJSON
	case row.PayloadBinary:
		return payloadBinary
	case jsonscan.Valid(row.Payload):
		return payloadJSON
	}
	return payloadText
}

// reservedAttributes are the names a member of the headers column may not
// take as an extension attribute: the context attributes of CloudEvents
// 1.0, data, and the extensions the router sets itself.
var reservedAttributes = map[string]bool{
	"specversion": true, "id": true, "source": true, "type": true, "subject": true, "time": true,
	"datacontenttype": true, "dataschema": true, "data": true,
	ExtAggregateType: true, ExtSchemaVersion: true, ExtTraceparent: true,
}

// validAttributeName reports whether name follows the CloudEvents naming
// rule: one or more of a-z and 0-9. (The spec recommends at most 20
// characters; longer names are accepted.)
func validAttributeName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// checkExtensions checks that every member of the headers column (members,
// as appendObjectHeaders returns them) can be an extension attribute: a
// valid, unreserved name, not repeated.
func checkExtensions(members []kgo.RecordHeader) *problem {
	for i, m := range members {
		switch {
		case !validAttributeName(m.Key):
			return newProblem(KindInvalidExtension, ErrInvalidExtension, "headers column member "+quote(m.Key)+
				" cannot be a CloudEvents extension attribute: names are lower-case letters a-z and digits 0-9 only; rename it (e.g. tenantid for tenant_id), or run with --envelope=plain")
		case reservedAttributes[m.Key]:
			return newProblem(KindInvalidExtension, ErrInvalidExtension, "headers column member "+quote(m.Key)+
				" is a CloudEvents attribute the router sets itself; rename it, or run with --envelope=plain")
		}
		for _, prev := range members[:i] {
			if prev.Key == m.Key {
				return newProblem(KindInvalidExtension, ErrInvalidExtension, "headers column member "+quote(m.Key)+
					" appears twice; a CloudEvents extension attribute has one value: remove the duplicate, or run with --envelope=plain")
			}
		}
	}
	return nil
}

// ceHeaderCount is how many headers the binary content mode adds to the
// plain record of row with members members of the headers column.
func ceHeaderCount(row *binlog.OutboxRow, members int) int {
	n := 7 + members // specversion, id, source, type, time, subject, content-type
	if row.AggregateType != nil {
		n++
	}
	if row.SchemaVersion != nil {
		n++
	}
	if row.Traceparent != nil {
		n++
	}
	return n
}

// appendBinaryMode appends the CloudEvents binary content mode headers of
// row to hs: the attributes as ce_ headers, datacontenttype as
// content-type (absent for a NULL payload, which has no data), the
// extensions after them. ts is the record timestamp; zero omits ce_time.
func (r *Router) appendBinaryMode(hs []kgo.RecordHeader, row *binlog.OutboxRow, ts time.Time, members []kgo.RecordHeader) []kgo.RecordHeader {
	hs = append(hs,
		kgo.RecordHeader{Key: HeaderCESpecVersion, Value: specVersionBytes},
		kgo.RecordHeader{Key: HeaderCEID, Value: row.EventID},
		kgo.RecordHeader{Key: HeaderCESource, Value: r.source(row.Database, row.Table)},
		kgo.RecordHeader{Key: HeaderCEType, Value: row.EventType})
	if !ts.IsZero() {
		hs = append(hs, kgo.RecordHeader{Key: HeaderCETime, Value: appendTime(make([]byte, 0, len(time.RFC3339Nano)), ts)})
	}
	hs = append(hs, kgo.RecordHeader{Key: HeaderCESubject, Value: row.AggregateID})
	if row.Payload != nil {
		hs = append(hs, kgo.RecordHeader{Key: HeaderContentType, Value: contentTypeBytes[r.payloadKind(row)]})
	}
	if row.AggregateType != nil {
		hs = append(hs, kgo.RecordHeader{Key: HeaderCEPrefix + ExtAggregateType, Value: row.AggregateType})
	}
	if row.SchemaVersion != nil {
		hs = append(hs, kgo.RecordHeader{Key: HeaderCEPrefix + ExtSchemaVersion, Value: row.SchemaVersion})
	}
	if row.Traceparent != nil {
		hs = append(hs, kgo.RecordHeader{Key: HeaderCEPrefix + ExtTraceparent, Value: row.Traceparent})
	}
	for _, m := range members {
		r.unescaped = append(append(r.unescaped[:0], HeaderCEPrefix...), m.Key...)
		hs = append(hs, kgo.RecordHeader{Key: r.headerKey(r.unescaped), Value: m.Value})
	}
	return hs
}

// appendTime appends ts in RFC 3339 in UTC with as many fractional digits
// as it has (the time attribute's format).
func appendTime(dst []byte, ts time.Time) []byte {
	return ts.UTC().AppendFormat(dst, time.RFC3339Nano)
}

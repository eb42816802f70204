package schema

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Columns names the outbox columns of a table. Empty optional names mean
// "not used". Names are matched case-insensitively, as MySQL matches column
// names.
type Columns struct {
	// Required: a table without one of these cannot be routed.
	EventID       string // unique event id, UUID text; default "event_id"
	AggregateType string // aggregate type, input of the topic template; default "aggregate_type"
	AggregateID   string // aggregate id, the Kafka key; default "aggregate_id"
	EventType     string // event type; default "event_type"
	Payload       string // payload, the Kafka value; default "payload"

	// Optional: used when the table has them, ignored when it does not.
	CreatedAt     string // creation time; default "created_at"; absent means the commit time is used
	SchemaVersion string // integer schema version of the payload; default "schema_version"
	Traceparent   string // W3C traceparent; default "traceparent"
	Headers       string // JSON object whose entries become extra Kafka headers; default "headers"
}

// DefaultColumns returns the column names of the default layout, the one
// printed by DDL.
func DefaultColumns() Columns {
	return Columns{
		EventID:       "event_id",
		AggregateType: "aggregate_type",
		AggregateID:   "aggregate_id",
		EventType:     "event_type",
		Payload:       "payload",
		CreatedAt:     "created_at",
		SchemaVersion: "schema_version",
		Traceparent:   "traceparent",
		Headers:       "headers",
	}
}

// maxIdentifierLength is MySQL's and MariaDB's limit for a column name, in
// characters. A longer name could never match a column.
const maxIdentifierLength = 64

// Validate reports whether c is usable: every required name is set, no name
// is longer than 64 characters or ends with a space (the server allows
// neither), and no column is used for two fields (compared
// case-insensitively).
func (c Columns) Validate() error {
	seen := make(map[string]string, len(fields)) // lower-cased name → field label
	for _, f := range fields {
		name := *f.name(&c)
		if name == "" {
			if f.required {
				return fmt.Errorf("outbox columns: no column name for the %s; set %s", f.label, f.flag)
			}
			continue
		}
		if utf8.RuneCountInString(name) > maxIdentifierLength {
			return fmt.Errorf("outbox columns: %s column name %q is longer than %d characters; set %s to a valid column name",
				f.label, name, maxIdentifierLength, f.flag)
		}
		if strings.HasSuffix(name, " ") {
			return fmt.Errorf("outbox columns: %s column name %q ends with a space; set %s to a valid column name",
				f.label, name, f.flag)
		}
		key := strings.ToLower(name)
		if other, ok := seen[key]; ok {
			return fmt.Errorf("outbox columns: column %q is used for both the %s and the %s; give each its own column with %s",
				name, other, f.label, f.flag)
		}
		seen[key] = f.label
	}
	return nil
}

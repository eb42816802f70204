package outbox

import (
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// Columns names the outbox columns of a table, like the router's
// --column-* flags and presets. Names are matched case-insensitively by the
// server. An empty optional name means the table has no such column: an
// event that sets the matching Event field is then rejected rather than
// silently losing it.
type Columns struct {
	// Required.
	EventID       string // event id, UUID text (Event.ID); default "event_id"
	AggregateType string // aggregate type (Event.AggregateType); default "aggregate_type"
	AggregateID   string // aggregate id, the Kafka key (Event.AggregateID); default "aggregate_id"
	EventType     string // event type (Event.Type); default "event_type"
	Payload       string // payload, the Kafka value (Event.Payload); default "payload"

	// Optional.

	// CreatedAt is the creation time column; default "created_at". The
	// Writer never writes it: the column must have a default, as the
	// DDL's DEFAULT CURRENT_TIMESTAMP(6) does. It only matters to DDL.
	CreatedAt     string
	SchemaVersion string // INT column for Event.SchemaVersion; default "schema_version"
	Traceparent   string // VARCHAR(55) column for Event.Traceparent; default "traceparent"
	Headers       string // JSON object column for Event.Headers; default "headers"
}

// DefaultColumns returns the column names of the default layout, the table
// DDL creates and the router reads with --preset default.
func DefaultColumns() Columns { return fromSchema(schema.DefaultColumns()) }

// DebeziumColumns returns the column names of Debezium's outbox table (id,
// aggregatetype, aggregateid, type, payload), the router's --preset
// debezium. It has no optional columns: events written with it may not set
// SchemaVersion, Traceparent or Headers unless the columns are added and
// named here.
func DebeziumColumns() Columns { return fromSchema(schema.DebeziumColumns()) }

func fromSchema(c schema.Columns) Columns {
	return Columns{
		EventID:       c.EventID,
		AggregateType: c.AggregateType,
		AggregateID:   c.AggregateID,
		EventType:     c.EventType,
		Payload:       c.Payload,
		CreatedAt:     c.CreatedAt,
		SchemaVersion: c.SchemaVersion,
		Traceparent:   c.Traceparent,
		Headers:       c.Headers,
	}
}

func (c Columns) toSchema() schema.Columns {
	return schema.Columns{
		EventID:       c.EventID,
		AggregateType: c.AggregateType,
		AggregateID:   c.AggregateID,
		EventType:     c.EventType,
		Payload:       c.Payload,
		CreatedAt:     c.CreatedAt,
		SchemaVersion: c.SchemaVersion,
		Traceparent:   c.Traceparent,
		Headers:       c.Headers,
	}
}

// validate reports whether c is usable: every required name set, each name
// a valid identifier, no column used for two fields.
func (c Columns) validate() error {
	named := []struct {
		field, name string
		required    bool
	}{
		{"EventID", c.EventID, true},
		{"AggregateType", c.AggregateType, true},
		{"AggregateID", c.AggregateID, true},
		{"EventType", c.EventType, true},
		{"Payload", c.Payload, true},
		{"CreatedAt", c.CreatedAt, false},
		{"SchemaVersion", c.SchemaVersion, false},
		{"Traceparent", c.Traceparent, false},
		{"Headers", c.Headers, false},
	}
	seen := make(map[string]string, len(named))
	for _, n := range named {
		if n.name == "" {
			if n.required {
				return fmt.Errorf("no column name in Columns.%s; every outbox table needs this column (see DefaultColumns)", n.field)
			}
			continue
		}
		if err := schema.CheckIdentifier(n.name); err != nil {
			return fmt.Errorf("invalid Columns.%s: %w", n.field, err)
		}
		key := strings.ToLower(n.name)
		if other, ok := seen[key]; ok {
			return fmt.Errorf("column %q is named by both Columns.%s and Columns.%s; give each field its own column", n.name, other, n.field)
		}
		seen[key] = n.field
	}
	return nil
}

package schema

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// defaultTable is the column list of the default DDL, in its order.
var defaultTable = []string{
	"id", "event_id", "aggregate_type", "aggregate_id", "event_type", "payload",
	"created_at", "schema_version", "traceparent", "headers",
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		columns Columns
		table   []string
		want    Layout
	}{
		{
			name:    "default layout, all optional columns present",
			columns: DefaultColumns(),
			table:   defaultTable,
			want: Layout{EventID: 1, AggregateType: 2, AggregateID: 3, EventType: 4, Payload: 5,
				CreatedAt: 6, SchemaVersion: 7, Traceparent: 8, Headers: 9, NumColumns: 10},
		},
		{
			name:    "default layout, optional columns absent",
			columns: DefaultColumns(),
			table:   []string{"id", "event_id", "aggregate_type", "aggregate_id", "event_type", "payload"},
			want: Layout{EventID: 1, AggregateType: 2, AggregateID: 3, EventType: 4, Payload: 5,
				CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 6},
		},
		{
			name:    "some optional columns, any order, extra columns ignored",
			columns: DefaultColumns(),
			table:   []string{"headers", "payload", "tenant", "event_type", "aggregate_id", "aggregate_type", "event_id", "created_at"},
			want: Layout{EventID: 6, AggregateType: 5, AggregateID: 4, EventType: 3, Payload: 1,
				CreatedAt: 7, SchemaVersion: -1, Traceparent: -1, Headers: 0, NumColumns: 8},
		},
		{
			name:    "debezium",
			columns: DebeziumColumns(),
			table:   []string{"id", "aggregatetype", "aggregateid", "type", "payload"},
			want: Layout{EventID: 0, AggregateType: 1, AggregateID: 2, EventType: 3, Payload: 4,
				CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 5},
		},
		{
			name:    "debezium ignores created_at and traceparent columns it does not name",
			columns: DebeziumColumns(),
			table:   []string{"id", "aggregatetype", "aggregateid", "type", "payload", "created_at", "traceparent"},
			want: Layout{EventID: 0, AggregateType: 1, AggregateID: 2, EventType: 3, Payload: 4,
				CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 7},
		},
		{
			name:    "case-insensitive both ways",
			columns: Columns{EventID: "Event_ID", AggregateType: "aggregate_type", AggregateID: "AGGREGATE_ID", EventType: "event_type", Payload: "Payload", Traceparent: "TraceParent"},
			table:   []string{"EVENT_ID", "Aggregate_Type", "aggregate_id", "Event_Type", "PAYLOAD", "traceparent"},
			want: Layout{EventID: 0, AggregateType: 1, AggregateID: 2, EventType: 3, Payload: 4,
				CreatedAt: -1, SchemaVersion: -1, Traceparent: 5, Headers: -1, NumColumns: 6},
		},
		{
			name:    "optional column not configured is -1 even when present",
			columns: Columns{EventID: "event_id", AggregateType: "aggregate_type", AggregateID: "aggregate_id", EventType: "event_type", Payload: "payload"},
			table:   defaultTable,
			want: Layout{EventID: 1, AggregateType: 2, AggregateID: 3, EventType: 4, Payload: 5,
				CreatedAt: -1, SchemaVersion: -1, Traceparent: -1, Headers: -1, NumColumns: 10},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.columns.Resolve("app.outbox", tt.table)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestResolveMissingRequired(t *testing.T) {
	tests := []struct {
		name    string
		columns Columns
		table   []string
		want    MissingColumnError
	}{
		{
			name:    "aggregate id",
			columns: DefaultColumns(),
			table:   []string{"id", "event_id", "aggregate_type", "event_type", "payload"},
			want:    MissingColumnError{Table: "app.outbox", Column: "aggregate_id", Field: "aggregate id", Flag: "--column-aggregate-id"},
		},
		{
			name:    "aggregate type",
			columns: DefaultColumns(),
			table:   []string{"event_id", "aggregate_id", "event_type", "payload"},
			want:    MissingColumnError{Table: "app.outbox", Column: "aggregate_type", Field: "aggregate type", Flag: "--column-aggregate-type"},
		},
		{
			name:    "payload",
			columns: DefaultColumns(),
			table:   []string{"event_id", "aggregate_type", "aggregate_id", "event_type", "body"},
			want:    MissingColumnError{Table: "app.outbox", Column: "payload", Field: "payload", Flag: "--column-payload"},
		},
		{
			name:    "debezium preset on the default table",
			columns: DebeziumColumns(),
			table:   defaultTable,
			want:    MissingColumnError{Table: "app.outbox", Column: "aggregatetype", Field: "aggregate type", Flag: "--column-aggregate-type"},
		},
		{
			name:    "default preset on a debezium table",
			columns: DefaultColumns(),
			table:   []string{"id", "aggregatetype", "aggregateid", "type", "payload"},
			want:    MissingColumnError{Table: "app.outbox", Column: "event_id", Field: "event id", Flag: "--column-event-id"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.columns.Resolve("app.outbox", tt.table)
			var missing *MissingColumnError
			require.ErrorAs(t, err, &missing)
			require.Equal(t, tt.want, *missing)
			require.Contains(t, err.Error(), "outbox table app.outbox")
			require.Contains(t, err.Error(), `"`+tt.want.Column+`"`)
			require.Contains(t, err.Error(), "add the column or set "+tt.want.Flag)
		})
	}
}

func TestMissingColumnErrorText(t *testing.T) {
	err := &MissingColumnError{Table: "app.outbox", Column: "aggregate_id", Field: "aggregate id", Flag: "--column-aggregate-id"}
	require.EqualError(t, err, `outbox table app.outbox has no column "aggregate_id" for the aggregate id; add the column or set --column-aggregate-id to the column that holds it`)
}

func TestResolveInvalid(t *testing.T) {
	t.Run("invalid columns", func(t *testing.T) {
		c := DefaultColumns()
		c.EventType = ""
		_, err := c.Resolve("app.outbox", defaultTable)
		require.ErrorContains(t, err, "resolving outbox columns of app.outbox: ")
		require.ErrorContains(t, err, "--column-event-type")
		var missing *MissingColumnError
		require.False(t, errors.As(err, &missing), "an unset name is a config error, not a missing column")
	})
	t.Run("no column names", func(t *testing.T) {
		_, err := DefaultColumns().Resolve("app.outbox", nil)
		require.ErrorIs(t, err, errNoColumnNames)
		require.ErrorContains(t, err, "binlog_row_metadata=FULL")
	})
}

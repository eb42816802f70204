package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPresetByName(t *testing.T) {
	tests := []struct {
		name      string
		want      Preset
		wantError string
	}{
		{name: "default", want: Preset{Name: "default", Columns: DefaultColumns()}},
		{name: "debezium", want: Preset{
			Name: "debezium",
			Columns: Columns{
				EventID:       "id",
				AggregateType: "aggregatetype",
				AggregateID:   "aggregateid",
				EventType:     "type",
				Payload:       "payload",
			},
			TopicTemplate: "outbox.event.{aggregate_type}",
		}},
		{name: "Debezium", wantError: `unknown outbox preset "Debezium"; use one of: default, debezium`},
		{name: "", wantError: `unknown outbox preset ""; use one of: default, debezium`},
		{name: "maxwell", wantError: `unknown outbox preset "maxwell"; use one of: default, debezium`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PresetByName(tt.name)
			if tt.wantError != "" {
				require.EqualError(t, err, tt.wantError)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.NoError(t, got.Columns.Validate())
		})
	}
}

func TestPresetByNameReturnsCopies(t *testing.T) {
	p, err := PresetByName("default")
	require.NoError(t, err)
	p.Columns.EventID = "changed"
	again, err := PresetByName("default")
	require.NoError(t, err)
	require.Equal(t, "event_id", again.Columns.EventID)
}

func TestDefaultColumns(t *testing.T) {
	require.Equal(t, Columns{
		EventID:       "event_id",
		AggregateType: "aggregate_type",
		AggregateID:   "aggregate_id",
		EventType:     "event_type",
		Payload:       "payload",
		CreatedAt:     "created_at",
		SchemaVersion: "schema_version",
		Traceparent:   "traceparent",
		Headers:       "headers",
	}, DefaultColumns())
}

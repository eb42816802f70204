package schema

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestColumnsValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Columns)
		wantErr []string // substrings of the error; nil means valid
	}{
		{name: "default", edit: func(*Columns) {}},
		{name: "optional columns unused", edit: func(c *Columns) {
			c.CreatedAt, c.SchemaVersion, c.Traceparent, c.Headers = "", "", "", ""
		}},
		{name: "missing event id", edit: func(c *Columns) { c.EventID = "" },
			wantErr: []string{"event id", "--column-event-id"}},
		{name: "missing aggregate type", edit: func(c *Columns) { c.AggregateType = "" },
			wantErr: []string{"aggregate type", "--column-aggregate-type"}},
		{name: "missing aggregate id", edit: func(c *Columns) { c.AggregateID = "" },
			wantErr: []string{"aggregate id", "--column-aggregate-id"}},
		{name: "missing event type", edit: func(c *Columns) { c.EventType = "" },
			wantErr: []string{"event type", "--column-event-type"}},
		{name: "missing payload", edit: func(c *Columns) { c.Payload = "" },
			wantErr: []string{"payload", "--column-payload"}},
		{name: "required used twice", edit: func(c *Columns) { c.AggregateID = "event_id" },
			wantErr: []string{`"event_id"`, "event id", "aggregate id", "--column-aggregate-id"}},
		{name: "optional reuses required, case-insensitive", edit: func(c *Columns) { c.Headers = "PAYLOAD" },
			wantErr: []string{`"PAYLOAD"`, "payload", "headers", "--column-headers"}},
		{name: "too long", edit: func(c *Columns) { c.EventType = strings.Repeat("é", 65) },
			wantErr: []string{"longer than 64", "--column-event-type"}},
		{name: "64 characters is fine", edit: func(c *Columns) { c.EventType = strings.Repeat("é", 64) }},
		{name: "trailing space", edit: func(c *Columns) { c.Traceparent = "tp " },
			wantErr: []string{"ends with a space", "--column-traceparent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultColumns()
			tt.edit(&c)
			err := c.Validate()
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, s := range tt.wantErr {
				require.Contains(t, err.Error(), s)
			}
			require.Equal(t, strings.ToLower(err.Error()[:1]), err.Error()[:1], "error text starts lower case")
		})
	}
}

// TestFieldsCoverColumns guards the field table: every Columns field has
// exactly one entry, so Validate, Resolve and DDL see every column.
func TestFieldsCoverColumns(t *testing.T) {
	var c Columns
	var l Layout
	seenName := map[*string]bool{}
	seenOrd := map[*int]bool{}
	for _, f := range fields {
		seenName[f.name(&c)] = true
		seenOrd[f.ordinal(&l)] = true
	}
	require.Len(t, seenName, 9, "each Columns field once")
	require.Len(t, seenOrd, 9, "each Layout ordinal once")
}

package binlog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With CheckPayloadJSON the reader says which payloads are JSON in UTF-8,
// whatever the column's character set, and a UTF-8 column's payload that
// is not JSON still gets the UTF-8 check: invalid UTF-8 stops the reader
// as it does without the setting, valid UTF-8 is left to the route.
func TestConvertChecksPayloadJSON(t *testing.T) {
	const (
		utf8mb4Payload = 45 // collation utf8mb4_general_ci
		latin1Payload  = 8  // latin1_swedish_ci
	)
	charsets := func(payload uint64) []uint64 {
		if payload == 0 { // binary: the table's default
			return []uint64{63, 3, 54, 4, 45}
		}
		return []uint64{63, 2, payload, 3, 54, 4, 45}
	}
	for _, tt := range []struct {
		name     string
		payload  uint64
		in       string
		check    bool
		wantJSON bool
		wantErr  string
		want     string
	}{
		{name: "utf8mb4 JSON", payload: utf8mb4Payload, in: `{"n":"Café"}`, check: true, wantJSON: true},
		{name: "utf8mb4 text", payload: utf8mb4Payload, in: `Café`, check: true},
		{name: "utf8mb4 invalid UTF-8", payload: utf8mb4Payload, in: "{\"n\":\"Caf\xe9\"}", check: true,
			wantErr: "column payload (utf8mb4) holds bytes that are not valid UTF-8: 0x7b226e223a22436166e9227d"},
		{name: "latin1 JSON, checked after conversion", payload: latin1Payload, in: "{\"n\":\"Caf\xe9\"}", check: true, wantJSON: true, want: `{"n":"Café"}`},
		{name: "binary JSON", in: `[1,2]`, check: true, wantJSON: true},
		{name: "binary, not JSON", in: "\x00\x01", check: true},
		{name: "not checked", payload: utf8mb4Payload, in: `{"n":1}`},
		{name: "not checked, invalid UTF-8", payload: utf8mb4Payload, in: "\xff", wantErr: "not valid UTF-8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tm := fullMetaTable()
			tm.DefaultCharset = charsets(tt.payload)
			opts := mariaOpts(UUIDStandard)
			opts.checkJSON = tt.check
			convs, _, err := valueConvs(tm, fiveColumns, fiveNames, nil, opts)
			require.NoError(t, err)
			tbl := &table{convs: convs, checkJSON: tt.check}
			r := OutboxRow{EventID: []byte("6ccd780c-baba-1026-9564-5b8c656024db"), AggregateID: []byte("a"),
				Payload: []byte(tt.in), EventType: []byte("\x00T"), AggregateType: []byte("o")}
			err = tbl.convert(&r)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantJSON, r.PayloadJSON)
			want := tt.want
			if want == "" {
				want = tt.in
			}
			assert.Equal(t, want, string(r.Payload))
		})
	}
	// A NULL payload is not JSON, and nothing is checked.
	convs, _, err := valueConvs(fullMetaTable(), fiveColumns, fiveNames, nil, mariaOpts(UUIDStandard))
	require.NoError(t, err)
	r := OutboxRow{AggregateType: []byte("o")}
	require.NoError(t, (&table{convs: convs, checkJSON: true}).convert(&r))
	assert.False(t, r.PayloadJSON)
}

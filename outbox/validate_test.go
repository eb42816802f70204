package outbox_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/schema"
	"github.com/binlog-router/binlog-router/outbox"
)

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func validEvent() outbox.Event {
	return outbox.Event{AggregateType: "order", AggregateID: "o-1", Type: "OrderCreated", Payload: map[string]int{"n": 1}}
}

func ptr[T any](v T) *T { return &v }

// TestValidationRejectsBeforeWriting checks every validation rule: a
// *FieldError naming the field, wrapping ErrInvalidEvent, returned before
// the (nil) transaction is touched.
func TestValidationRejectsBeforeWriting(t *testing.T) {
	tests := []struct {
		name   string
		writer *outbox.Writer
		edit   func(*outbox.Event)
		field  string
		reason string // substring of the message
		// unsupported: the json.Marshal error is wrapped too
		unsupported bool
	}{
		{name: "empty aggregate id", edit: func(e *outbox.Event) { e.AggregateID = "" }, field: "AggregateID", reason: "is empty"},
		{name: "empty type", edit: func(e *outbox.Event) { e.Type = "" }, field: "Type", reason: "is empty"},
		{name: "empty aggregate type", edit: func(e *outbox.Event) { e.AggregateType = "" }, field: "AggregateType", reason: "is empty"},
		{name: "aggregate id not utf-8", edit: func(e *outbox.Event) { e.AggregateID = "o-\xff" }, field: "AggregateID", reason: "UTF-8"},
		{name: "payload does not marshal", edit: func(e *outbox.Event) { e.Payload = make(chan int) }, field: "Payload",
			reason: "cannot be encoded as JSON", unsupported: true},
		{name: "payload NaN", edit: func(e *outbox.Event) { e.Payload = math.NaN() }, field: "Payload", reason: "cannot be encoded"},
		{name: "raw payload not JSON", edit: func(e *outbox.Event) { e.Payload = json.RawMessage(`{"a":`) }, field: "Payload", reason: "not valid JSON"},
		{name: "bytes payload not JSON", edit: func(e *outbox.Event) { e.Payload = []byte("hello") }, field: "Payload", reason: "not valid JSON"},
		{name: "empty bytes payload", edit: func(e *outbox.Event) { e.Payload = []byte{} }, field: "Payload", reason: "nil Payload for a NULL"},
		{name: "empty header key", edit: func(e *outbox.Event) { e.Headers = map[string]string{"": "x"} }, field: "Headers", reason: "empty key"},
		{name: "header value not utf-8", edit: func(e *outbox.Event) { e.Headers = map[string]string{"k": "\xff"} }, field: "Headers", reason: "UTF-8"},
		{name: "traceparent malformed", edit: func(e *outbox.Event) { e.Traceparent = "trace-me" }, field: "Traceparent", reason: "W3C"},
		{name: "schema version too big", edit: func(e *outbox.Event) { e.SchemaVersion = ptr(math.MaxInt32 + 1) }, field: "SchemaVersion", reason: "range"},
		{name: "traceparent without column", writer: outbox.New("outbox", outbox.WithColumns(outbox.DebeziumColumns())),
			edit: func(e *outbox.Event) { e.Traceparent = traceparent }, field: "Traceparent", reason: "Columns.Traceparent is empty"},
		{name: "headers without column", writer: outbox.New("outbox", outbox.WithColumns(outbox.DebeziumColumns())),
			edit: func(e *outbox.Event) { e.Headers = map[string]string{"k": "v"} }, field: "Headers", reason: "Columns.Headers is empty"},
		{name: "schema version without column", writer: outbox.New("outbox", outbox.WithColumns(outbox.DebeziumColumns())),
			edit: func(e *outbox.Event) { e.SchemaVersion = ptr(1) }, field: "SchemaVersion", reason: "Columns.SchemaVersion is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.writer
			if w == nil {
				w = outbox.New("outbox")
			}
			e := validEvent()
			tt.edit(&e)

			_, err := w.Insert(t.Context(), nil, e)
			var fe *outbox.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tt.field, fe.Field)
			assert.Equal(t, -1, fe.Index)
			assert.ErrorIs(t, err, outbox.ErrInvalidEvent)
			assert.Contains(t, err.Error(), "outbox event: "+tt.field+" ")
			assert.Contains(t, err.Error(), tt.reason)
			if tt.unsupported {
				var ute *json.UnsupportedTypeError
				assert.ErrorAs(t, err, &ute)
			}

			// In a batch the message names the event's position.
			_, err = w.InsertMany(t.Context(), nil, validEvent(), e)
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, 1, fe.Index)
			assert.Contains(t, err.Error(), "outbox event 1: "+tt.field+" ")
		})
	}
}

func TestValidEventsReachTheTransactionCheck(t *testing.T) {
	// Valid events pass validation and stop at the nil transaction, which
	// shows the table above failed for its own reason.
	e := validEvent()
	e.SchemaVersion, e.Traceparent, e.Headers = ptr(2), traceparent, map[string]string{"tenant": "acme"}
	for _, p := range []any{nil, json.RawMessage(`[1,2]`), []byte(`"s"`), "plain string", 42, struct{ A string }{"<&>"}, (*int)(nil)} {
		e.Payload = p
		_, err := outbox.New("outbox").Insert(t.Context(), nil, e)
		require.Error(t, err)
		assert.NotErrorIs(t, err, outbox.ErrInvalidEvent, "payload %#v", p)
		assert.Contains(t, err.Error(), "nil *sql.Tx")
	}
}

func TestDuplicateIDsInOneBatch(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	a, b := validEvent(), validEvent()
	a.ID, b.ID = id, id
	_, err := outbox.New("outbox").InsertMany(t.Context(), nil, a, b)
	var fe *outbox.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "ID", fe.Field)
	assert.Equal(t, 1, fe.Index)
	assert.Contains(t, err.Error(), "also the ID of event 0")
}

func TestTraceparentFormats(t *testing.T) {
	tests := []struct {
		tp string
		ok bool
	}{
		{traceparent, true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true},   // another version, same layout
		{strings.ToUpper(traceparent), false},                               // upper-case hex
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},  // version ff is invalid
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},  // zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},  // zero parent id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", false}, // too long for VARCHAR(55)
		{"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", false},  // wrong separator
		{"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", false},  // not hex
	}
	for _, tt := range tests {
		e := validEvent()
		e.Traceparent = tt.tp
		_, err := outbox.New("outbox").Insert(t.Context(), nil, e)
		assert.Equal(t, !tt.ok, errors.Is(err, outbox.ErrInvalidEvent), "%q: %v", tt.tp, err)
	}
}

func TestNewRejectsBadTablesAndColumns(t *testing.T) {
	noPayload := outbox.DefaultColumns()
	noPayload.Payload = ""
	clash := outbox.DefaultColumns()
	clash.Headers = "PAYLOAD"
	tests := []struct {
		name, table string
		cols        outbox.Columns
		want        string
	}{
		{"empty table", " ", outbox.DefaultColumns(), "empty table name"},
		{"three parts", "a.b.c", outbox.DefaultColumns(), "more than two parts"},
		{"space", "my outbox", outbox.DefaultColumns(), "quote it with backticks"},
		{"unterminated quote", "`app.outbox", outbox.DefaultColumns(), "unterminated"},
		{"too long", strings.Repeat("x", 65), outbox.DefaultColumns(), "longer than 64"},
		{"missing column", "outbox", noPayload, "Columns.Payload"},
		{"column used twice", "outbox", clash, "both Columns.Payload and Columns.Headers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := outbox.New(tt.table, outbox.WithColumns(tt.cols))
			_, err := w.Insert(t.Context(), nil, validEvent())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotErrorIs(t, err, outbox.ErrInvalidEvent)
			_, err = w.InsertMany(t.Context(), nil)
			assert.Error(t, err, "an empty batch still reports the writer's error")
			_, err = w.DDL(outbox.FlavorMySQL)
			assert.Error(t, err)
		})
	}
	for _, ok := range []string{"outbox", "app.outbox", "`my.app`.`out``box`", " app.outbox "} {
		_, err := outbox.New(ok).Insert(t.Context(), nil, validEvent())
		assert.ErrorContains(t, err, "nil *sql.Tx", "table %q", ok)
	}
}

// TestDDLIsTheRoutersDDL: outbox.DDL prints what `binlog-router schema`
// prints, since both come from internal/schema.
func TestDDLIsTheRoutersDDL(t *testing.T) {
	for _, flavor := range []string{outbox.FlavorMySQL, outbox.FlavorMariaDB} {
		want, err := schema.DDL(flavor, "outbox", schema.DefaultColumns())
		require.NoError(t, err)
		got, err := outbox.DDL(flavor)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := outbox.DDL("postgres")
	assert.ErrorContains(t, err, "unknown flavor")

	want, err := schema.DDL(schema.FlavorMariaDB, "app.events", schema.DebeziumColumns())
	require.NoError(t, err)
	got, err := outbox.New("app.events", outbox.WithColumns(outbox.DebeziumColumns())).DDL(outbox.FlavorMariaDB)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestColumnsMirrorSchema keeps outbox.Columns and the router's
// schema.Columns in step: same fields, same presets.
func TestColumnsMirrorSchema(t *testing.T) {
	fieldNames := func(v any) []string {
		typ := reflect.TypeOf(v)
		var names []string
		for i := range typ.NumField() {
			names = append(names, typ.Field(i).Name)
		}
		return names
	}
	require.Equal(t, fieldNames(schema.Columns{}), fieldNames(outbox.Columns{}))
	asMap := func(v any) map[string]string {
		m := map[string]string{}
		val := reflect.ValueOf(v)
		for i := range val.NumField() {
			m[val.Type().Field(i).Name] = val.Field(i).String()
		}
		return m
	}
	assert.Equal(t, asMap(schema.DefaultColumns()), asMap(outbox.DefaultColumns()))
	assert.Equal(t, asMap(schema.DebeziumColumns()), asMap(outbox.DebeziumColumns()))
}

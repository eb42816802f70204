package route

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/cetest"
)

// headerMap returns r's headers by key; a repeated key fails the test.
func headerMap(t *testing.T, r *kgo.Record) map[string]string {
	t.Helper()
	m := make(map[string]string, len(r.Headers))
	for _, h := range r.Headers {
		_, dup := m[h.Key]
		require.False(t, dup, "header %q repeated", h.Key)
		m[h.Key] = string(h.Value)
	}
	return m
}

func ceRouter(t *testing.T, env Envelope, mod func(*Config)) *Router {
	return newRouter(t, func(c *Config) {
		c.Envelope = env
		if mod != nil {
			mod(c)
		}
	})
}

// fullRow has every optional column, and 2-, 3- and 4-byte UTF-8 in the
// payload and the attributes.
func fullRow() *binlog.OutboxRow {
	row := testRow()
	row.AggregateType = []byte("order")
	row.AggregateID = []byte("kundé-€-😀")
	row.Payload = []byte(`{"name":"Zoë","price":"12 €","emoji":"😀","nested":{"a":[1,2.50,null]}}`)
	row.SchemaVersion = []byte("3")
	row.Traceparent = []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	row.Headers = []byte(`{"tenant":"acme-ü","priority":7}`)
	row.CreatedAt = testCreated.Add(123456 * time.Nanosecond)
	return row
}

func TestCloudEventsBinaryMode(t *testing.T) {
	r := ceRouter(t, EnvelopeCloudEvents, nil)
	row := fullRow()
	rec, err := r.Route(row, testTxn())
	require.NoError(t, err)

	assert.Equal(t, row.AggregateID, rec.Key)
	assert.Equal(t, row.Payload, rec.Value)
	hs := headerMap(t, rec)
	for k, v := range map[string]string{
		// The plain record's headers stay.
		"id": testEventID, "event_type": "OrderCreated", "aggregate_type": "order", "schema_version": "3",
		"traceparent": string(row.Traceparent), "tenant": "acme-ü", "priority": "7", "binlog_gtid": "0-1-42",
		// The binding's.
		"ce_specversion": "1.0", "ce_id": testEventID, "ce_source": "/mysql/shop/outbox", "ce_type": "OrderCreated",
		"ce_time": "2026-03-01T11:59:59.500123456Z", "ce_subject": "kundé-€-😀", "content-type": "application/json",
		"ce_aggregatetype": "order", "ce_schemaversion": "3", "ce_traceparent": string(row.Traceparent),
		"ce_tenant": "acme-ü", "ce_priority": "7",
	} {
		assert.Equal(t, v, hs[k], "header %s", k)
	}
	assert.Len(t, hs, 20)

	ev, err := cetest.ToEvent(context.Background(), rec)
	require.NoError(t, err)
	require.NoError(t, ev.Validate())
	assert.Equal(t, testEventID, ev.ID())
	assert.Equal(t, "/mysql/shop/outbox", ev.Source())
	assert.Equal(t, "OrderCreated", ev.Type())
	assert.Equal(t, "kundé-€-😀", ev.Subject())
	assert.True(t, row.CreatedAt.Equal(ev.Time()), "time %v", ev.Time())
	assert.Equal(t, "application/json", ev.DataContentType())
	assert.Equal(t, row.Payload, ev.Data())
	assert.Equal(t, map[string]any{"aggregatetype": "order", "schemaversion": "3",
		"traceparent": string(row.Traceparent), "tenant": "acme-ü", "priority": "7"}, ev.Extensions())
}

func TestCloudEventsStructuredMode(t *testing.T) {
	r := ceRouter(t, EnvelopeCloudEventsStructured, nil)
	row := fullRow()
	rec, err := r.Route(row, testTxn())
	require.NoError(t, err)

	assert.Equal(t, row.AggregateID, rec.Key)
	hs := headerMap(t, rec)
	assert.Equal(t, "application/cloudevents+json", hs["content-type"])
	assert.Equal(t, testEventID, hs["id"])
	assert.Equal(t, "0-1-42", hs["binlog_gtid"])
	assert.NotContains(t, hs, "ce_id")

	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Value, &body))
	assert.Equal(t, map[string]any{
		"specversion": "1.0", "id": testEventID, "source": "/mysql/shop/outbox", "type": "OrderCreated",
		"time": "2026-03-01T11:59:59.500123456Z", "subject": "kundé-€-😀", "datacontenttype": "application/json",
		"aggregatetype": "order", "schemaversion": "3", "traceparent": string(row.Traceparent),
		"tenant": "acme-ü", "priority": "7",
		"data": map[string]any{"name": "Zoë", "price": "12 €", "emoji": "😀", "nested": map[string]any{"a": []any{1.0, 2.5, nil}}},
	}, body)

	ev, err := cetest.ToEvent(context.Background(), rec)
	require.NoError(t, err)
	require.NoError(t, ev.Validate())
	assert.Equal(t, testEventID, ev.ID())
	assert.Equal(t, "kundé-€-😀", ev.Subject())
	assert.True(t, row.CreatedAt.Equal(ev.Time()), "time %v", ev.Time())
	assert.JSONEq(t, string(row.Payload), string(ev.Data()))
	assert.Equal(t, "acme-ü", ev.Extensions()["tenant"])
}

// TestCloudEventsPayloadKinds checks the content type and data of JSON,
// text and binary payloads and of NULL, in both modes, through the SDK.
func TestCloudEventsPayloadKinds(t *testing.T) {
	binary := []byte{0x00, 0x00, 0x00, 0x00, 0x07, 0x02, 0xff, 0xfe, '"', '\\', 0x80, 0x0a}
	cases := []struct {
		name        string
		payload     []byte
		binaryCol   bool
		validate    bool
		contentType string
		base64      bool
	}{
		{"json validated", []byte(` {"a":"ß€😀"} `), false, true, ContentTypeJSON, false},
		{"json sniffed", []byte(`[1,"ß"]`), false, false, ContentTypeJSON, false},
		{"json in a blob, validated", []byte(`{"a":1}`), true, true, ContentTypeJSON, false},
		{"text", []byte("héllo \"€\" 😀\n\ttab\x01"), false, false, ContentTypeText, false},
		{"binary", binary, true, false, ContentTypeBinary, true},
		{"json-looking blob", []byte(`{"a":1}`), true, false, ContentTypeBinary, true},
		{"null", nil, false, true, "", false},
	}
	for _, env := range []Envelope{EnvelopeCloudEvents, EnvelopeCloudEventsStructured} {
		for _, c := range cases {
			t.Run(string(env)+"/"+c.name, func(t *testing.T) {
				r := ceRouter(t, env, func(cfg *Config) { cfg.ValidateJSON = c.validate })
				row := testRow()
				row.Payload, row.PayloadBinary = c.payload, c.binaryCol
				rec, err := r.Route(row, testTxn())
				require.NoError(t, err)
				if env == EnvelopeCloudEvents {
					assert.Equal(t, c.payload, rec.Value)
					ct, ok := headerMap(t, rec)["content-type"]
					assert.Equal(t, c.contentType, ct)
					assert.Equal(t, c.payload != nil, ok)
				} else {
					var body map[string]json.RawMessage
					require.NoError(t, json.Unmarshal(rec.Value, &body))
					_, hasB64 := body["data_base64"]
					assert.Equal(t, c.base64, hasB64)
					if c.base64 {
						var s string
						require.NoError(t, json.Unmarshal(body["data_base64"], &s))
						assert.Equal(t, base64.StdEncoding.EncodeToString(c.payload), s)
					}
				}
				ev, err := cetest.ToEvent(context.Background(), rec)
				require.NoError(t, err)
				require.NoError(t, ev.Validate())
				assert.Equal(t, c.contentType, ev.DataContentType())
				switch {
				case c.payload == nil:
					assert.Nil(t, ev.Data())
				case c.contentType == ContentTypeJSON:
					assert.JSONEq(t, string(c.payload), string(ev.Data()))
				default:
					assert.Equal(t, c.payload, ev.Data())
				}
			})
		}
	}
}

func TestCloudEventsTimeAndSource(t *testing.T) {
	r := ceRouter(t, EnvelopeCloudEvents, func(c *Config) { c.CloudEventsSource = "urn:shop:{database}:{table}" })
	row := testRow()
	row.Database, row.Table = "my db", "out/box"
	rec, err := r.Route(row, testTxn()) // no created_at: the commit time
	require.NoError(t, err)
	hs := headerMap(t, rec)
	assert.Equal(t, "2026-03-01T12:00:00Z", hs["ce_time"])
	assert.Equal(t, "urn:shop:my%20db:out%2Fbox", hs["ce_source"])

	rec, err = r.Route(testRow(), &binlog.Txn{GTID: "0-1-1"}) // no time at all
	require.NoError(t, err)
	assert.NotContains(t, headerMap(t, rec), "ce_time")
	ev, err := cetest.ToEvent(context.Background(), rec)
	require.NoError(t, err)
	require.NoError(t, ev.Validate())
}

func TestCloudEventsSourceConfig(t *testing.T) {
	for _, s := range []string{"", "/mysql/{database}/{table}", "https://shop.example/outbox", "urn:x:{table}"} {
		assert.NoError(t, Config{Envelope: EnvelopeCloudEvents, CloudEventsSource: s}.Validate(), s)
	}
	for s, want := range map[string]string{
		"/x/{db}":       "only the placeholders {database} and {table}",
		"/x/{table":     "only the placeholders",
		"/a b/{table}":  "cannot appear in a URI reference",
		"/ü/{database}": "cannot appear in a URI reference",
	} {
		err := Config{CloudEventsSource: s}.Validate()
		require.ErrorIs(t, err, ErrInvalidEnvelope, s)
		assert.Contains(t, err.Error(), want)
		assert.Contains(t, err.Error(), "--cloudevents-source")
	}
	_, err := New(Config{Envelope: "cloudevent"})
	require.ErrorIs(t, err, ErrInvalidEnvelope)
	assert.Contains(t, err.Error(), `--envelope "cloudevent": use plain, cloudevents or cloudevents-structured`)
}

func TestCloudEventsExtensionNames(t *testing.T) {
	for headers, want := range map[string]string{
		`{"tenant_id":"a"}`:         `member "tenant_id" cannot be a CloudEvents extension attribute: names are lower-case letters a-z and digits 0-9 only; rename it (e.g. tenantid for tenant_id)`,
		`{"Tenant":"a"}`:            `member "Tenant" cannot be`,
		`{"":"a"}`:                  `member "" cannot be`,
		`{"source":"a"}`:            `member "source" is a CloudEvents attribute the router sets itself`,
		`{"traceparent":"a"}`:       `member "traceparent" is a CloudEvents attribute`,
		`{"a1":"x","a1":"y"}`:       `member "a1" appears twice`,
		`{"ok":1,"content-type":2}`: `member "content-type" cannot be`,
	} {
		for _, env := range []Envelope{EnvelopeCloudEvents, EnvelopeCloudEventsStructured} {
			row := testRow()
			row.Headers = []byte(headers)
			_, err := ceRouter(t, env, nil).Route(row, testTxn())
			re := requireKind(t, err, KindInvalidExtension)
			assert.True(t, errors.Is(re, ErrInvalidExtension))
			assert.Contains(t, re.Error(), want)
			assert.Contains(t, re.Error(), "--envelope=plain")
		}
		// The plain envelope takes them as headers.
		row := testRow()
		row.Headers = []byte(headers)
		_, err := newRouter(t, nil).Route(row, testTxn())
		assert.NoError(t, err, headers)
	}
	assert.True(t, validAttributeName("abcdefghijklmnopqrstuvwxyz0123456789"))
	for _, name := range []string{ExtAggregateType, ExtSchemaVersion, ExtTraceparent} {
		assert.True(t, validAttributeName(name) && len(name) <= 20, name)
	}
}

// TestCloudEventsPlainUnchanged checks that the default envelope is the
// plain record: no CloudEvents header.
func TestCloudEventsPlainUnchanged(t *testing.T) {
	rec, err := newRouter(t, nil).Route(fullRow(), testTxn())
	require.NoError(t, err)
	for _, h := range rec.Headers {
		assert.NotContains(t, []string{"content-type", "ce_id", "ce_specversion"}, h.Key)
	}
	_, err = cetest.ToEvent(context.Background(), rec)
	assert.ErrorIs(t, err, binding.ErrUnknownEncoding)
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s/", "\x00\x1f\x7f\n\r\t\b\f", "ß€😀", "<&>", "\u2028\u2029"} {
		var got string
		require.NoError(t, json.Unmarshal(appendJSONString(nil, []byte(s)), &got), s)
		assert.Equal(t, s, got)
	}
	var got string
	require.NoError(t, json.Unmarshal(appendJSONString(nil, []byte("a\xffb\xe2\x82")), &got))
	assert.Equal(t, "a\ufffdb\ufffd\ufffd", got)
}

// FuzzCloudEvents routes arbitrary rows in both CloudEvents modes: a row
// either is a row error or gives a record the SDK decodes, with the
// payload as its data (JSON data compared as JSON) and the row's id,
// type and subject when they are UTF-8 (from binary mode's headers the
// SDK trims the spaces around them; the headers keep them).
func FuzzCloudEvents(f *testing.F) {
	f.Add([]byte(`{"a":"ß"}`), false, []byte(`{"tenant":"x"}`), []byte("order-1"), []byte("Created"), false)
	f.Add([]byte("text \x00 \"q\""), false, []byte(nil), []byte("ü€😀"), []byte("T"), true)
	f.Add([]byte{0, 0, 0, 0, 1, 0xff}, true, []byte(`{"Bad":1}`), []byte("k"), []byte("T"), false)
	f.Fuzz(func(t *testing.T, payload []byte, binaryCol bool, headers, aggID, evType []byte, structured bool) {
		env := EnvelopeCloudEvents
		if structured {
			env = EnvelopeCloudEventsStructured
		}
		r := ceRouter(t, env, func(c *Config) { c.ValidateJSON, c.RequireUUID = false, false })
		row := testRow()
		row.Payload, row.PayloadBinary, row.Headers, row.AggregateID, row.EventType = payload, binaryCol, headers, aggID, evType
		rec, err := r.Route(row, testTxn())
		if err != nil {
			var re *RowError
			require.True(t, errors.As(err, &re), "%v", err)
			return
		}
		if structured {
			require.True(t, json.Valid(rec.Value), "structured value is not JSON: %q", rec.Value)
		}
		ev, err := cetest.ToEvent(context.Background(), rec)
		require.NoError(t, err)
		if !utf8Valid(aggID) || !utf8Valid(evType) || blank(aggID) || blank(evType) {
			return // the SDK's Validate wants UTF-8 and rejects blank strings
		}
		require.NoError(t, ev.Validate())
		// The SDK trims spaces around attribute values it reads from
		// binary mode's headers (not from a structured value); the record
		// itself carries them as the row has them.
		read := func(b []byte) string {
			if structured {
				return string(b)
			}
			return strings.TrimSpace(string(b))
		}
		assert.Equal(t, read(evType), ev.Type())
		assert.Equal(t, read(aggID), ev.Subject())
		if !structured {
			hs := headerMap(t, rec)
			assert.Equal(t, string(evType), hs["ce_type"])
			assert.Equal(t, string(aggID), hs["ce_subject"])
		}
		switch {
		case len(payload) == 0:
			assert.Empty(t, ev.Data())
		case ev.DataContentType() == ContentTypeJSON:
			assert.JSONEq(t, string(payload), string(ev.Data()))
		case !structured || utf8Valid(payload) || binaryCol:
			assert.Equal(t, payload, ev.Data())
		}
	})
}

func utf8Valid(b []byte) bool { return utf8.Valid(b) }

func blank(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

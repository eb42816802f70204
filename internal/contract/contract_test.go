package contract

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const orderSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["orderId", "amount"],
  "properties": {
    "orderId": {"type": "string"},
    "amount": {"$ref": "defs/money.json"},
    "items": {"type": "array", "items": {"type": "object", "required": ["sku"]}}
  }
}`

const moneySchema = `{"type": "number", "minimum": 0}`

// writeDir writes files (name -> content) into a new directory.
func writeDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

func TestLoadGood(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"order_created.json":      orderSchema,
		"order_created.v2.json":   `{"type":"object","required":["orderId","currency"]}`,
		"order_created.v010.json": `{"type":"object","required":["v10"]}`,
		"com.shop.paid.json":      `{"type":"object"}`,
		"defs/money.json":         moneySchema,
		"README.txt":              "not a contract",
	})
	s, err := Load(dir, "")
	require.NoError(t, err)
	assert.Equal(t, MissingAllow, s.Missing())
	var got []string
	for _, k := range s.Contracts() {
		got = append(got, filepath.Base(k.File)+"="+k.EventType+"@"+k.SchemaVersion)
	}
	assert.Equal(t, []string{"com.shop.paid.json=com.shop.paid@", "order_created.json=order_created@",
		"order_created.v010.json=order_created@10", "order_created.v2.json=order_created@2"}, got)
	assert.True(t, s.Has("order_created"))
	assert.False(t, s.Has("money"), "files in subdirectories are not contracts")

	// Versioned names: the row's schema_version picks the file, leading
	// zeros aside; an unknown or non-numeric version falls back to the
	// unversioned contract.
	for _, c := range []struct{ version, file string }{
		{"", "order_created.json"}, {"2", "order_created.v2.json"}, {"02", "order_created.v2.json"},
		{"10", "order_created.v010.json"}, {"3", "order_created.json"}, {"v2", "order_created.json"},
	} {
		var v []byte
		if c.version != "" {
			v = []byte(c.version)
		}
		k := s.Lookup([]byte("order_created"), v)
		require.NotNil(t, k, c.version)
		assert.Equal(t, c.file, filepath.Base(k.File), "schema_version %q", c.version)
	}
	assert.Nil(t, s.Lookup([]byte("unknown"), nil))
}

func TestLoadRefusesBrokenContracts(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"not json", map[string]string{"a.json": `{"type": "object"`}, []string{"a.json"}},
		{"not a schema", map[string]string{"a.json": `{"type": "objekt"}`}, []string{"a.json"}},
		{"bad $ref file", map[string]string{"a.json": `{"$ref": "defs/missing.json"}`}, []string{"a.json", "missing.json"}},
		{"bad $ref pointer", map[string]string{"a.json": `{"$ref": "#/$defs/nope"}`}, []string{"a.json", "nope"}},
		{"$ref to the network", map[string]string{"a.json": `{"$ref": "https://example.com/x.json"}`}, []string{"a.json"}},
		{"one of two broken", map[string]string{"good.json": `{}`, "bad.v1.json": `{"minimum": "x"}`}, []string{"bad.v1.json"}},
		{"same version twice", map[string]string{"a.v1.json": `{}`, "a.v01.json": `{}`}, []string{"a.v01.json", "a.v1.json"}},
		{"empty", map[string]string{"notes.txt": "x"}, []string{"holds no contract"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeDir(t, c.files)
			s, err := Load(dir, MissingAllow)
			require.Error(t, err)
			assert.Nil(t, s)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := Load(filepath.Join(t.TempDir(), "nope"), MissingAllow)
	assert.ErrorContains(t, err, "--contracts-dir")
	_, err = Load(writeDir(t, map[string]string{"a.json": "{}"}), "maybe")
	assert.ErrorContains(t, err, `--contracts-missing "maybe": use allow or fail`)
	s, err := Load("", MissingFail)
	assert.NoError(t, err)
	assert.Nil(t, s, "no directory, no contracts")
}

func TestCheck(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"order_created.json":    orderSchema,
		"order_created.v2.json": `{"type":"object","required":["currency"]}`,
		"defs/money.json":       moneySchema,
	})
	s, err := Load(dir, MissingAllow)
	require.NoError(t, err)
	ot := []byte("order_created")
	cases := []struct {
		name, payload, version       string
		file, path, keyword, message string
		more                         int
	}{
		{name: "valid", payload: `{"orderId":"o-1","amount":12.5}`},
		{name: "valid v2", payload: `{"currency":"EUR"}`, version: "2"},
		{name: "missing member", payload: `{"orderId":"o-1"}`, file: "order_created.json",
			path: "", keyword: "required", message: "missing property 'amount'"},
		{name: "wrong type", payload: `{"orderId":7,"amount":1}`, file: "order_created.json",
			path: "/orderId", keyword: "type", message: "want string"},
		{name: "through $ref", payload: `{"orderId":"o","amount":-1}`, file: "order_created.json",
			path: "/amount", keyword: "minimum", message: "minimum"},
		{name: "nested", payload: `{"orderId":"o","amount":1,"items":[{"sku":"a"},{"qty":1}]}`, file: "order_created.json",
			path: "/items/1", keyword: "required", message: "sku"},
		{name: "two failures: the first by instance path", payload: `{"orderId":1,"amount":"x"}`, file: "order_created.json",
			path: "/amount", keyword: "type", message: "want number", more: 1},
		{name: "version picks the file", payload: `{"orderId":"o","amount":1}`, version: "2",
			file: "order_created.v2.json", keyword: "required", message: "currency"},
		{name: "not json", payload: `{"orderId":`, file: "order_created.json", keyword: "json", message: "not JSON"},
		{name: "trailing data", payload: `{} {}`, file: "order_created.json", keyword: "json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v []byte
			if c.version != "" {
				v = []byte(c.version)
			}
			err := s.Check(ot, v, []byte(c.payload))
			if c.file == "" {
				assert.NoError(t, err)
				return
			}
			var viol *Violation
			require.ErrorAs(t, err, &viol)
			assert.True(t, errors.Is(err, ErrViolation))
			assert.Equal(t, filepath.Join(dir, c.file), viol.File)
			if c.keyword != "json" {
				assert.Equal(t, c.path, viol.InstancePath)
			}
			assert.Equal(t, c.keyword, viol.Keyword)
			assert.Contains(t, viol.Message, c.message)
			assert.Equal(t, c.more, viol.More)
			assert.True(t, strings.HasPrefix(err.Error(), "payload violates contract "+viol.File+" at instance path "), err.Error())
		})
	}
	many := []byte(`{"orderId":1,"amount":"x","items":[{},{},{"sku":1}]}`)
	first := s.Check(ot, nil, many)
	require.Error(t, first)
	for range 50 {
		require.Equal(t, first.Error(), s.Check(ot, nil, many).Error(), "the same payload, the same error")
	}
	assert.NoError(t, s.Check(ot, nil, nil), "a NULL payload (tombstone) is not checked")
	assert.NoError(t, s.Check([]byte("other"), nil, []byte(`"anything"`)), "allow: no contract, no check")
	var none *Set
	assert.NoError(t, none.Check(ot, nil, []byte(`1`)), "a nil Set checks nothing")
}

func TestCheckMissingFail(t *testing.T) {
	dir := writeDir(t, map[string]string{"order_created.json": `{"type":"object"}`})
	s, err := Load(dir, MissingFail)
	require.NoError(t, err)
	assert.NoError(t, s.Check([]byte("order_created"), nil, []byte(`{}`)))
	err = s.Check([]byte("order_paid"), []byte("3"), []byte(`{}`))
	require.ErrorIs(t, err, ErrMissing)
	assert.Equal(t, `no contract for event_type "order_paid" in `+dir+
		`: add "order_paid.json" or "order_paid.v3.json", or run with --contracts-missing=allow`, err.Error())
	assert.NoError(t, s.Check([]byte("order_paid"), nil, nil), "a tombstone needs no contract")
}

func TestPointer(t *testing.T) {
	assert.Equal(t, "", pointer(nil))
	assert.Equal(t, "/a~1b/c~0d/0", pointer([]string{"a/b", "c~d", "0"}))
}

func TestCheckStrict(t *testing.T) {
	dir := writeDir(t, map[string]string{"e.json": orderSchema, "defs/money.json": moneySchema})
	s, err := Load(dir, MissingFail)
	require.NoError(t, err)
	k := s.Lookup([]byte("e"), nil)
	require.NotNil(t, k)
	latin1 := []byte("{\"orderId\":\"caf\xe9\",\"amount\":1}")
	assert.NoError(t, k.Check(latin1), "Check reads bytes that are not UTF-8 as U+FFFD, as encoding/json does")
	assert.ErrorIs(t, k.CheckStrict(latin1), ErrNotJSON)
	assert.ErrorIs(t, k.CheckStrict([]byte(`{"orderId":`)), ErrNotJSON)
	assert.ErrorIs(t, k.CheckStrict([]byte(`{"orderId":"o","amount":1} x`)), ErrNotJSON)
	assert.NoError(t, k.CheckStrict([]byte(`{"orderId":"caf\u00e9 \ud800","amount":1}`)), "escapes are UTF-8 text, lone surrogates too")
	var v *Violation
	require.ErrorAs(t, k.CheckStrict([]byte(`{"orderId":"o","amount":-1}`)), &v)
	assert.Equal(t, "minimum", v.Keyword)
}

// TestCheckNumbersExact: numbers reach the library as their text, so a
// value too close to a bound for a float64 to tell is still told.
func TestCheckNumbersExact(t *testing.T) {
	dir := writeDir(t, map[string]string{"e.json": `{"type":"object","properties":{
		"n": {"type": "number", "minimum": 0},
		"i": {"type": "integer", "maximum": 12345678901234567890}}}`})
	s, err := Load(dir, MissingFail)
	require.NoError(t, err)
	e := []byte("e")
	tiny := `-0.` + strings.Repeat("0", 400) + `1`
	assert.ErrorIs(t, s.Check(e, nil, []byte(`{"n":`+tiny+`}`)), ErrViolation, "below 0 by 1e-401")
	assert.NoError(t, s.Check(e, nil, []byte(`{"n":-0}`)))
	assert.NoError(t, s.Check(e, nil, []byte(`{"n":0.0e5,"i":12345678901234567890}`)))
	assert.ErrorIs(t, s.Check(e, nil, []byte(`{"i":12345678901234567891}`)), ErrViolation)
	assert.ErrorIs(t, s.Check(e, nil, []byte(`{"i":1.5}`)), ErrViolation)
	assert.NoError(t, s.Check(e, nil, []byte(`{"i":1.0,"n":123456789012345678}`)), "1.0 is an integer to JSON Schema")
}

func TestLookupDoesNotAllocate(t *testing.T) {
	dir := writeDir(t, map[string]string{"e.json": `{}`, "e.v2.json": `{}`})
	s, err := Load(dir, MissingFail)
	require.NoError(t, err)
	e, v := []byte("e"), []byte("002")
	allocs := testing.AllocsPerRun(100, func() {
		if k := s.Lookup(e, v); k == nil || k.SchemaVersion != "2" {
			t.Fatal("no e.v2.json")
		}
	})
	assert.Zero(t, allocs)
}

// TestCheckConcurrent: goroutines sharing a Set (and its pooled decoders)
// get the verdicts each payload gets alone.
func TestCheckConcurrent(t *testing.T) {
	dir := writeDir(t, map[string]string{"e.json": orderSchema, "defs/money.json": moneySchema})
	s, err := Load(dir, MissingFail)
	require.NoError(t, err)
	payloads := []string{`{"orderId":"o","amount":1}`, `{"orderId":"o\u00e9","amount":-1}`, `{"orderId":1}`,
		`{"orderId":"o","amount":1,"items":[{"sku":"a"},{}]}`, `[{"a":`, "\"\xff\""}
	want := make([]string, len(payloads))
	for i, p := range payloads {
		if err := s.Check([]byte("e"), nil, []byte(p)); err != nil {
			want[i] = err.Error()
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				i := (g + n) % len(payloads)
				got := ""
				if err := s.Check([]byte("e"), nil, []byte(payloads[i])); err != nil {
					got = err.Error()
				}
				if got != want[i] {
					errs <- fmt.Sprintf("%q: %q, alone %q", payloads[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

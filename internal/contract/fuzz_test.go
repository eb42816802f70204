package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FuzzCheck: any payload gives nil or a *Violation naming the contract's
// file, never a panic, and the same verdict twice.
func FuzzCheck(f *testing.F) {
	dir := writeDir(f, map[string]string{"e.json": orderSchema, "defs/money.json": moneySchema})
	s, err := Load(dir, MissingFail)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{`{"orderId":"o","amount":1}`, `{"orderId":1}`, `[]`, `{"items":[{}]}`, `"\ud800"`, `1e400`, `{"amount":-0.0}`, `{`, ""} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		err := s.Check([]byte("e"), nil, payload)
		again := s.Check([]byte("e"), nil, payload)
		if (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("two verdicts: %v, %v", err, again)
		}
		var v *Violation
		if err != nil && (!errors.As(err, &v) || v.File == "" || v.Keyword == "") {
			t.Fatalf("not a violation naming file and keyword: %#v", err)
		}
	})
}

// FuzzDecode: decode accepts exactly what jsonschema.UnmarshalJSON
// accepts, and gives the same document, numbers compared by value and
// text; it reports bytes that are not UTF-8 exactly when
// json.Valid(payload) holds and utf8.Valid(payload) does not.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"orderId":"o","amount":1}`, `{"a":1,"a":[true,false,null]}`, `[]`, `{}`, ` [ {} , [ ] ] `,
		`"\ud800"`, `"\ud83d\ude00\ud83d\u0041\udc00x"`, `"a\"\\\/\b\f\n\r\t\u00e9"`, "\"\xff\xc3\x28\xe2\x82\"",
		`1e400`, `-0`, `-0.0`, `0`, `123456789012345678`, `1234567890123456789`, `-123456789012345678`, `1.5e-3`, `01`,
		`{`, ``, ` `, `1 2`, `{} x`, `[1,]`, `{"a":}`, `{"a" 1}`, `tru`, `nul`, "\"\x01\"", `"\u12"`, `"\x"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) { sameAsUnmarshalJSON(t, payload) })
}

// TestDecodeDepth: encoding/json's nesting limit, empty containers
// included (deep seeds slow the fuzzing too much to be among its seeds).
func TestDecodeDepth(t *testing.T) {
	for _, p := range []string{
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 9999) + "{}" + strings.Repeat("]", 9999), strings.Repeat("[", 10000) + "{}" + strings.Repeat("]", 10000),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10000) + "[]" + strings.Repeat("}", 10000),
	} {
		sameAsUnmarshalJSON(t, []byte(p))
	}
}

// sameAsUnmarshalJSON fails t unless decode(payload) gives
// jsonschema.UnmarshalJSON's verdict and document.
func sameAsUnmarshalJSON(t *testing.T, payload []byte) {
	t.Helper()
	want, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	got, ok := decode(payload)
	if ok != (err == nil) {
		t.Fatalf("decode ok=%v, UnmarshalJSON error %v", ok, err)
	}
	if !ok {
		return
	}
	if msg := sameDoc(got.doc, want, nil); msg != "" {
		t.Fatal(msg)
	}
	if bad := !utf8.Valid(payload); got.badUTF8 != bad {
		t.Fatalf("badUTF8=%v, utf8.Valid=%v", got.badUTF8, !bad)
	}
}

// sameDoc returns "" if got is want, numbers of either kind compared by
// their text, else what differs where. at is the path to got; it is
// formatted only on a difference, so deep documents stay linear.
func sameDoc(got, want any, at []string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || g == nil || len(g) != len(w) {
			return fmt.Sprintf("%s: got %#v, want %#v", pointer(at), got, want)
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s: no key %q", pointer(at), k)
			}
			if msg := sameDoc(gv, wv, append(at, k)); msg != "" {
				return msg
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || g == nil || len(g) != len(w) {
			return fmt.Sprintf("%s: got %#v, want %#v", pointer(at), got, want)
		}
		for i := range w {
			if msg := sameDoc(g[i], w[i], append(at, strconv.Itoa(i))); msg != "" {
				return msg
			}
		}
		return ""
	case json.Number:
		switch g := got.(type) {
		case json.Number:
			if g == w {
				return ""
			}
		case int64:
			if strconv.FormatInt(g, 10) == string(w) {
				return ""
			}
		}
		return fmt.Sprintf("%s: got %#v, want %#v", pointer(at), got, want)
	default:
		if got != want {
			return fmt.Sprintf("%s: got %#v, want %#v", pointer(at), got, want)
		}
		return ""
	}
}

package jsonscan

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonValidCases are inputs where a hand-written validator is likely to
// differ from encoding/json.Valid. The expected answer is always
// reference's (json.Valid and UTF-8); want only documents it and catches a
// change in encoding/json.
var jsonValidCases = []struct {
	in   string
	want bool
}{
	// Documents and whitespace.
	{``, false},
	{` `, false},
	{"\t\n\r 1 \t\n\r", true},
	{"\v1", false},      // vertical tab is not JSON whitespace
	{"\f1", false},      // nor is form feed
	{"\u00a01", false},  // nor NBSP
	{"\ufeff{}", false}, // a BOM is not skipped
	{"1\x00", false},    // nor is a trailing NUL
	{`1 2`, false},      // one value only
	{`{}{}`, false},
	{`[]]`, false},
	{`{}}`, false},
	{`"a""b"`, false},
	{`nulltrue`, false},
	{`{} `, true},
	{"\n[\n]\n", true},
	{`[ ]`, true},
	{`{ }`, true},
	{"[\t1\r,\n2 ]", true},
	{`{ "a" : 1 , "b" : [ ] }`, true},

	// Literals.
	{`true`, true}, {`false`, true}, {`null`, true},
	{`tru`, false}, {`fals`, false}, {`nul`, false}, {`t`, false},
	{`True`, false}, {`NULL`, false}, {`nil`, false}, {`truee`, false},
	{`true1`, false}, {`[true,false,null]`, true}, {`[truefalse]`, false},
	{`NaN`, false}, {`Infinity`, false}, {`-Infinity`, false}, {`undefined`, false},

	// Numbers.
	{`0`, true}, {`-0`, true}, {`1`, true}, {`-1`, true}, {`1234567890`, true},
	{`01`, false}, {`-01`, false}, {`00`, false}, {`+1`, false}, {`-`, false}, {`--1`, false},
	{`.5`, false}, {`-.5`, false}, {`1.`, false}, {`1.e1`, false}, {`0.5`, true}, {`-0.0`, true},
	{`1e1`, true}, {`1E1`, true}, {`1e+1`, true}, {`1e-1`, true}, {`1E+01`, true}, {`0e0`, true},
	{`1e`, false}, {`1e+`, false}, {`1e-`, false}, {`1e+-1`, false}, {`1ee1`, false}, {`1e1.5`, false},
	{`1.5e3`, true}, {`-1.50e-2`, true}, {`1.5.5`, false}, {`0x10`, false}, {`1_000`, false},
	{`123456789012345678901234567890e999999`, true}, // range is not syntax
	{`[0,1]`, true}, {`[01]`, false}, {`[-]`, false}, {`[1.]`, false}, {`{"a":-}`, false},
	{`1 `, true}, {`1,`, false}, {`[1,]`, false}, {`[,1]`, false}, {`[1,,2]`, false}, {`[1 2]`, false},
	{`-a`, false}, {`1a`, false}, {`1d`, false}, {`1E`, false}, {`1f`, false},

	// Strings and escapes.
	{`""`, true}, {`"`, false}, {`"a`, false}, {`"\"`, false}, {`"\\"`, true}, {`"\\\"`, false},
	{`"\"\\\/\b\f\n\r\t"`, true},
	{`"\a"`, false}, {`"\v"`, false}, {`"\0"`, false}, {`"\'"`, false}, {`"\x41"`, false}, {`"\U0041"`, false},
	{`"\u0041"`, true}, {`"\uABCD"`, true}, {`"\uabcd"`, true}, {`"\uAbCd"`, true}, {`"\u00e9"`, true},
	{`"\u004"`, false}, {`"\u00"`, false}, {`"\u"`, false}, {`"\u004g"`, false}, {`"\u 041"`, false},
	{`"\u0041`, false}, {`"\u00410"`, true},
	{`"\ud800"`, true}, {`"\udc00\ud800"`, true}, {`"\ud83d\ude00"`, true}, // surrogates are not paired up
	{"\"\x00\"", false}, {"\"\x1f\"", false}, {"\"\t\"", false}, {"\"\n\"", false}, {"\"\r\"", false},
	{"\"\x7f\"", true}, {"\" \"", true},
	{"\"\xff\"", false},             // invalid UTF-8 inside a string is rejected (RFC 8259)
	{"\"\xed\xa0\x80\"", false},     // so is an encoded surrogate
	{"\"\xc0\x80\"", false},         // and an overlong encoding
	{"\"\xe2\x82\"", false},         // and a truncated sequence
	{"\"Caf\xe9\"", false},          // and latin1 text
	{"\"\xf4\x90\x80\x80\"", false}, // and a code point above U+10FFFF
	{"\"é ü 注文 🦄\"", true},
	{"\"\xf4\x8f\xbf\xbf\"", true},                          // U+10FFFF
	{"\"1234567é\"", true}, {"\"12345678é1234567ü\"", true}, // around the 8-byte boundaries
	{"\"1234567\xe9\"", false}, {"\"123456\xc3\"", false},
	{"\xff", false}, {"[\xff]", false}, // nor outside a string
	{"{\"\xff\":1}", false}, // keys are strings too
	{"{\"é\":\"ü\"}", true},
	{`"12345678\"90abcdef"`, true},            // specials at and around the 8-byte boundaries
	{`"1234567"`, true}, {`"12345678"`, true}, // (the fast path reads eight bytes at a time)
	{`"1234567\`, false}, {`"12345678`, false},
	{"\"1234567\x1f12345678\"", false}, {"\"123456789012345\x00\"", false},
	{"\"\x20\x21\x23\x5b\x5d\x7e\xc2\x80\xc2\xa0\xdf\xbf\xe0\xa0\x80\"", true},
	{"\"\x20\x21\x23\x5b\x5d\x7e\x80\xa0\xdf\xe0\"", false},

	// Objects.
	{`{"a":1}`, true}, {`{"a":1,"b":2}`, true}, {`{"":null}`, true}, {`{"a":{"b":{}}}`, true},
	{`{a:1}`, false}, {`{'a':1}`, false}, {`{1:1}`, false}, {`{null:1}`, false}, {`{"a"}`, false},
	{`{"a":}`, false}, {`{"a" 1}`, false}, {`{"a"::1}`, false}, {`{"a":1,}`, false}, {`{,}`, false},
	{`{"a":1 "b":2}`, false}, {`{"a":1;"b":2}`, false}, {`{"a":1]`, false}, {`[1}`, false},
	{`{"a":[1}]`, false}, {`[{"a":1]}`, false}, {`{"a":1,"a":2}`, true}, // duplicates are allowed
	{`{`, false}, {`[`, false}, {`}`, false}, {`]`, false}, {`{"a":1`, false}, {`[1`, false},
	{`{"a"`, false}, {`{"a":`, false}, {`{"a" `, false}, {`[[[]]`, false}, {`[[]]]`, false},
	{`[[[[[[]]]]]]`, true}, {`[{},[],{"":[{}]}]`, true},
	{`[}`, false}, {`{]`, false}, {"[ }", false}, {"{ \t]", false}, {`[[}]`, false}, {`{"a":{]}`, false},

	// Other junk.
	{`/**/1`, false}, {`1//`, false}, {`'a'`, false}, {`<`, false}, {`:`, false}, {`,`, false},
}

// reference is what Valid must return: encoding/json's answer for
// syntax, and RFC 8259's UTF-8 requirement, which json.Valid does not
// check inside strings.
func reference(b []byte) bool { return json.Valid(b) && utf8.Valid(b) }

func TestValidTable(t *testing.T) {
	for _, tt := range jsonValidCases {
		std := reference([]byte(tt.in))
		if std != tt.want {
			t.Errorf("reference(%q) = %v; the table says %v (did encoding/json change?)", tt.in, std, tt.want)
		}
		if got := Valid([]byte(tt.in)); got != std {
			t.Errorf("Valid(%q) = %v, reference = %v", tt.in, got, std)
		}
	}
}

// TestValidPrefixes checks every prefix of some valid documents: all
// but the whole are cut short somewhere.
func TestValidPrefixes(t *testing.T) {
	for _, doc := range []string{realisticPayload(), `{"a":[1,-2.5e+3,true,false,null,"\u00e9\n"],"b":{}}`} {
		for i := range len(doc) + 1 {
			in := []byte(doc[:i])
			if got, want := Valid(in), reference(in); got != want {
				t.Errorf("Valid(%q) = %v, reference = %v", in, got, want)
			}
		}
	}
}

// TestValidDepth checks nesting around the 64 levels held in a word and
// around encoding/json's limit, with arrays and objects mixed so that a
// wrongly remembered kind closes with the wrong bracket.
func TestValidDepth(t *testing.T) {
	const seed = 1 // fixed: the test must be reproducible
	rng := rand.New(rand.NewPCG(seed, seed))
	for _, depth := range []int{1, 2, 63, 64, 65, 66, 127, 128, 129, 200, maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		for _, mix := range []string{"arrays", "objects", "random"} {
			var open, close strings.Builder
			closers := make([]byte, depth)
			for d := range depth {
				obj := mix == "objects" || mix == "random" && rng.IntN(2) == 0
				if obj {
					open.WriteString(`{"k":`)
					closers[depth-1-d] = '}'
				} else {
					open.WriteString(`[0,`)
					closers[depth-1-d] = ']'
				}
			}
			close.Write(closers)
			check := func(doc string) {
				t.Helper()
				if got, want := Valid([]byte(doc)), reference([]byte(doc)); got != want {
					t.Errorf("depth %d (%s), %d bytes: Valid = %v, reference = %v", depth, mix, len(doc), got, want)
				}
			}
			check(open.String() + "1" + close.String())
			if depth <= 200 {
				// Each closer in turn swapped for the other kind, and cut short.
				for i := range closers {
					bad := []byte(close.String())
					bad[i] ^= ']' ^ '}'
					check(open.String() + "1" + string(bad))
					check(open.String() + "1" + close.String()[:i])
				}
			}
		}
	}
	// Going back up and down again reuses the spilled levels.
	doc := strings.Repeat("[", 100) + strings.Repeat("]", 30) + "," + strings.Repeat(`{"a":[`, 30) +
		strings.Repeat("]}", 30) + strings.Repeat("]", 70)
	if !json.Valid([]byte(doc)) || !Valid([]byte(doc)) {
		t.Errorf("down 100, up 30, down 60, up 100: json.Valid = %v, Valid = %v", json.Valid([]byte(doc)), Valid([]byte(doc)))
	}
}

func TestValidDoesNotAllocate(t *testing.T) {
	p := []byte(realisticPayload())
	deep64 := []byte(strings.Repeat("[", 64) + strings.Repeat("]", 64))
	if n := testing.AllocsPerRun(100, func() { Valid(p); Valid(deep64) }); n != 0 {
		t.Errorf("Valid allocates %v times per call", n)
	}
}

// FuzzValid holds Valid to reference (json.Valid and UTF-8) on
// arbitrary bytes, as they are and nested 70 deep, past the levels that
// fit in a word.
func FuzzValid(f *testing.F) {
	for _, tt := range jsonValidCases {
		f.Add([]byte(tt.in))
	}
	f.Add([]byte(realisticPayload()))
	const (
		wrapOpen  = `[{"k":[{"k":[{"k":[{"k":[{"k":[{"k":[{"k":[{"k":[{"k":[{"k":`
		wrapClose = `}]}]}]}]}]}]}]}]}]}]`
	)
	outer := strings.Repeat("[", 70-len(wrapClose))
	outerClose := strings.Repeat("]", 70-len(wrapClose))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), reference(b); got != want {
			t.Fatalf("Valid(%q) = %v, reference = %v", b, got, want)
		}
		w := []byte(outer + wrapOpen + string(b) + wrapClose + outerClose)
		if got, want := Valid(w), reference(w); got != want {
			t.Fatalf("nested 70 deep: Valid(%q) = %v, reference = %v", w, got, want)
		}
	})
}

// realisticPayload returns a 500-byte outbox payload: a nested object with
// strings, numbers, arrays, escapes and non-ASCII text.
func realisticPayload() string {
	const p = `{"orderId":"ord_01HZX3K9Q7","status":"PAID","placedAt":"2026-03-01T11:59:59.5Z",` +
		`"customer":{"id":70412,"name":"Zoë Ångström","email":"zoe@example.com","vip":true,"tags":["returning","eu"]},` +
		`"shipping":{"street":"Königstraße 12","city":"München","zip":"80331","country":"DE","note":"Ring \"twice\"\nthen wait"},` +
		`"items":[{"sku":"A-1","title":"Café mug \u2615","qty":2,"price":12.50},{"sku":"B-7","title":"Tea, 100g","qty":1,"price":7.25e0}],` +
		`"discount":null,"total":32.25,"source":"web\/checkout"}`
	return p
}

// bigPayload returns a 64 KiB document: an array of realistic payloads,
// padded with trailing whitespace.
func bigPayload() []byte {
	const size = 64 << 10
	p := realisticPayload()
	var sb strings.Builder
	sb.WriteString(`{"events":[`)
	for sb.Len()+len(p)+len(`,]}`) <= size {
		if !strings.HasSuffix(sb.String(), "[") {
			sb.WriteByte(',')
		}
		sb.WriteString(p)
	}
	sb.WriteString("]}")
	sb.WriteString(strings.Repeat(" ", size-sb.Len()))
	return []byte(sb.String())
}

func jsonBenchPayloads(b *testing.B) []struct {
	name string
	p    []byte
} {
	small, big := []byte(realisticPayload()), bigPayload()
	if len(small) != 500 || len(big) != 64<<10 || !json.Valid(small) || !json.Valid(big) {
		b.Fatalf("bad bench payloads: %d and %d bytes", len(small), len(big))
	}
	return []struct {
		name string
		p    []byte
	}{{"payload500", small}, {"payload64KiB", big}}
}

func BenchmarkValid(b *testing.B) { benchValid(b, Valid) }

// BenchmarkJSONValidStd is BenchmarkValid with encoding/json.Valid,
// for comparison.
func BenchmarkJSONValidStd(b *testing.B) { benchValid(b, json.Valid) }

func benchValid(b *testing.B, valid func([]byte) bool) {
	for _, c := range jsonBenchPayloads(b) {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.p)))
			b.ReportAllocs()
			for b.Loop() {
				if !valid(c.p) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

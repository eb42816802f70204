package contract

import (
	"encoding/json"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/binlog-router/binlog-router/internal/jsonscan"
)

// maxDepth is encoding/json's nesting limit (maxNestingDepth in its
// scanner.go): a document with more containers open at once is not JSON
// to it, so it is not to decode either.
const maxDepth = 10000

// decoded is what decode makes of a payload.
type decoded struct {
	doc any
	// badUTF8 is set when a string of the payload held bytes that are not
	// UTF-8, which doc has as U+FFFD (as encoding/json decodes them).
	badUTF8 bool
}

// decode parses payload, in one pass, into the document that
// jsonschema.UnmarshalJSON(bytes.NewReader(payload)) returns: the same
// map[string]any, []any, string, bool and nil values, the last of
// duplicate keys kept, strings unescaped and bytes that are not UTF-8
// replaced by U+FFFD as encoding/json does, and numbers of the same value
// and text (FuzzDecode holds it to that). A number is an int64 when its
// text is an integer of at most 18 digits and not "-0", else a
// json.Number of its text: both are exact, and the library converts every
// number it compares to a big.Rat from its text, which the int64 makes
// more cheaply. ok is false exactly when UnmarshalJSON returns an error.
//
// No string of the document is allocated on its own: the text of a
// string (or key, or number) without escapes and in UTF-8 is a view of
// payload, the others are substrings of one string built as the payload
// is read. So payload must not be modified while the document is in use,
// and the document must not outlive its use by the caller: Check and
// CheckStrict keep nothing of it (the texts of a Violation are formatted
// anew). Containers are made once, at their full size, from a stack that
// is reused between calls. Safe for concurrent use.
func decode(payload []byte) (d decoded, ok bool) {
	p := decoders.Get().(*decoder)
	d, ok = p.decode(payload)
	p.reset()
	decoders.Put(p)
	return d, ok
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// decoder holds the stacks of one decode; a decoder in the pool holds no
// reference to a document.
type decoder struct {
	vals   []any           // the values of the open containers, in order
	keys   []string        // the keys of the open objects, one per value of an object in vals
	frames []frame         // the open containers, innermost last
	sb     strings.Builder // the texts that are not views of the payload
	bad    bool
}

// frame is one open container: where its values start in vals, and for
// an object where its keys start in keys.
type frame struct {
	obj  bool
	vals int
	keys int
}

// maxKept bounds the stacks a pooled decoder keeps, so that one deep or
// wide payload does not pin its memory.
const maxKept = 1 << 12

func (p *decoder) reset() {
	clear(p.vals)
	clear(p.keys)
	p.vals, p.keys, p.frames = p.vals[:0], p.keys[:0], p.frames[:0]
	if cap(p.vals) > maxKept {
		p.vals = nil
	}
	if cap(p.keys) > maxKept {
		p.keys = nil
	}
	if cap(p.frames) > maxKept {
		p.frames = nil
	}
	p.sb = strings.Builder{}
	p.bad = false
}

func (p *decoder) decode(b []byte) (decoded, bool) {
	n := len(b)
	i := 0
	var v any
value: // a value is expected at b[i:], maybe after whitespace
	for {
		i = skipSpace(b, i)
		if i >= n {
			return decoded{}, false
		}
		switch c := b[i]; c {
		case '"':
			var s string
			if s, i = p.str(b, i+1); i < 0 {
				return decoded{}, false
			}
			v = s
		case '{', '[':
			if len(p.frames) >= maxDepth {
				return decoded{}, false
			}
			i = skipSpace(b, i+1)
			if i < n && b[i] == c+2 { // "{}" or "[]": '}' is '{'+2, ']' is '['+2
				i++
				if c == '{' {
					v = map[string]any{}
				} else {
					v = []any{}
				}
				break // on to what may follow a value
			}
			p.frames = append(p.frames, frame{obj: c == '{', vals: len(p.vals), keys: len(p.keys)})
			if c == '{' {
				if i = p.key(b, i); i < 0 {
					return decoded{}, false
				}
			}
			continue
		case 't':
			if n-i < 4 || b[i+1] != 'r' || b[i+2] != 'u' || b[i+3] != 'e' {
				return decoded{}, false
			}
			v, i = true, i+4
		case 'f':
			if n-i < 5 || b[i+1] != 'a' || b[i+2] != 'l' || b[i+3] != 's' || b[i+4] != 'e' {
				return decoded{}, false
			}
			v, i = false, i+5
		case 'n':
			if n-i < 4 || b[i+1] != 'u' || b[i+2] != 'l' || b[i+3] != 'l' {
				return decoded{}, false
			}
			v, i = nil, i+4
		default:
			if v, i = p.number(b, i); i < 0 {
				return decoded{}, false
			}
		}
		// After a value v: the end of the document, a comma, or the end
		// of the innermost container.
		for {
			i = skipSpace(b, i)
			if len(p.frames) == 0 {
				if i != n {
					return decoded{}, false
				}
				return decoded{doc: v, badUTF8: p.bad}, true
			}
			if i >= n {
				return decoded{}, false
			}
			p.vals = append(p.vals, v)
			f := &p.frames[len(p.frames)-1]
			c := b[i]
			i++
			if c == ',' {
				if f.obj {
					if i = p.key(b, i); i < 0 {
						return decoded{}, false
					}
				}
				continue value
			}
			if f.obj {
				if c != '}' {
					return decoded{}, false
				}
				vals, keys := p.vals[f.vals:], p.keys[f.keys:]
				m := make(map[string]any, len(vals))
				for j, k := range keys {
					m[k] = vals[j] // a later duplicate replaces an earlier one
				}
				v = m
				clear(keys)
				p.keys = p.keys[:f.keys]
			} else {
				if c != ']' {
					return decoded{}, false
				}
				v = append([]any(nil), p.vals[f.vals:]...)
			}
			clear(p.vals[f.vals:])
			p.vals = p.vals[:f.vals]
			p.frames = p.frames[:len(p.frames)-1]
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// key reads an object member's key and colon at b[i:], each maybe after
// whitespace, pushes the key and returns the index after the colon, or -1.
func (p *decoder) key(b []byte, i int) int {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	var k string
	if k, i = p.str(b, i+1); i < 0 {
		return -1
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	p.keys = append(p.keys, k)
	return i + 1
}

// str reads the rest of a string whose opening quote is just before b[i]
// and returns its decoded text and the index after its closing quote, or
// -1. The text is what encoding/json's unquote makes of it: a view of b
// when it has no escape and is UTF-8, else a copy in p.sb.
func (p *decoder) str(b []byte, i int) (string, int) {
	n := len(b)
	first := i
	copied := -1 // where in p.sb the text starts; -1 while it is b[first:i] unchanged
	for {
		run := i
		if i = jsonscan.PlainEnd(b, i); i >= n {
			return "", -1
		}
		if copied >= 0 {
			p.sb.Write(b[run:i])
		}
		switch c := b[i]; {
		case c == '"':
			if copied < 0 {
				return view(b[first:i]), i + 1
			}
			return p.sb.String()[copied:], i + 1
		case c == '\\':
			if i+1 >= n {
				return "", -1
			}
			if copied < 0 {
				copied = p.sb.Len()
				p.sb.Write(b[first:i])
			}
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				p.sb.WriteByte(e)
			case 'b':
				p.sb.WriteByte('\b')
			case 'f':
				p.sb.WriteByte('\f')
			case 'n':
				p.sb.WriteByte('\n')
			case 'r':
				p.sb.WriteByte('\r')
			case 't':
				p.sb.WriteByte('\t')
			case 'u':
				r := hex4(b, i+2)
				if r < 0 {
					return "", -1
				}
				i += 6
				if utf16.IsSurrogate(rune(r)) {
					// A surrogate pair is one rune; any other surrogate
					// is U+FFFD, and what follows it is read on its own.
					r2 := -1
					if n-i >= 6 && b[i] == '\\' && b[i+1] == 'u' {
						r2 = hex4(b, i+2)
					}
					if d := utf16.DecodeRune(rune(r), rune(r2)); d != utf8.RuneError {
						p.sb.WriteRune(d)
						i += 6
						continue
					}
					r = utf8.RuneError
				}
				p.sb.WriteRune(rune(r))
				continue
			default:
				return "", -1
			}
			i += 2
		case c < 0x20:
			return "", -1
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				if copied < 0 {
					copied = p.sb.Len()
					p.sb.Write(b[first:i])
				}
				p.bad = true
				p.sb.WriteRune(utf8.RuneError)
			} else if copied >= 0 {
				p.sb.Write(b[i : i+size])
			}
			i += size
		}
	}
}

// view returns b as a string without copying it (see decode).
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// hex4 returns the value of the four hex digits at b[i:], or -1.
func hex4(b []byte, i int) int {
	if len(b)-i < 4 {
		return -1
	}
	r := 0
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | int(c)
	}
	return r
}

// number reads the number starting at b[i] and returns it and the index
// after it, or -1. What follows it is the caller's to check.
func (p *decoder) number(b []byte, i int) (any, int) {
	n := len(b)
	start := i
	neg := b[i] == '-'
	if neg {
		i++
		if i >= n {
			return nil, -1
		}
	}
	var u uint64
	switch c := b[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		for ; i < n && '0' <= b[i] && b[i] <= '9'; i++ {
			u = u*10 + uint64(b[i]-'0') // wraps past 19 digits; then unused
		}
	default:
		return nil, -1
	}
	integer := true
	if i < n && b[i] == '.' {
		integer = false
		i++
		if i >= n || b[i] < '0' || b[i] > '9' {
			return nil, -1
		}
		for i++; i < n && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	if i < n && b[i]|0x20 == 'e' {
		integer = false
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= n || b[i] < '0' || b[i] > '9' {
			return nil, -1
		}
		for i++; i < n && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	digits := i - start
	if neg {
		digits--
	}
	if integer && digits <= 18 && !(neg && u == 0) {
		if neg {
			return -int64(u), i
		}
		return int64(u), i
	}
	return json.Number(view(b[start:i])), i
}

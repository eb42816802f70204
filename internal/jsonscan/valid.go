package jsonscan

import (
	"unicode/utf8"
)

// maxJSONDepth is encoding/json's nesting limit (maxNestingDepth in its
// scanner.go): a document with more than this many containers open at once
// is not valid JSON to json.Valid, so it is not to Valid either.
const maxJSONDepth = 10000

// Valid reports whether b is exactly one JSON value in UTF-8,
// optionally surrounded by space, tab, CR or LF. It returns what
// encoding/json.Valid(b) && utf8.Valid(b) return for every input
// (FuzzValid holds it to that), faster than json.Valid alone
// (BenchmarkValid against BenchmarkJSONValidStd): one pass, no
// recursion, and no allocation unless containers nest more than 64 deep.
//
// RFC 8259 requires JSON text exchanged between systems to be UTF-8, so
// bytes that are not (a latin1 é, a truncated, overlong or surrogate
// sequence) make it invalid, where json.Valid accepts them inside strings.
// Lone surrogate escapes (\ud800) are valid syntax and accepted, as by
// json.Valid. Outside strings every byte must be ASCII JSON syntax (a BOM
// is invalid).
func Valid(b []byte) bool {
	n := len(b)
	i := 0
	// The open containers, innermost in bit 0 of kinds (1 = object). Levels
	// beyond the 64 that fit are spilled to deep, one byte each.
	var kinds uint64
	var deep []byte
	depth := 0
value: // a value is expected at b[i:], maybe after whitespace
	for {
		for i < n && b[i] <= ' ' && jsonSpace(b[i]) {
			i++
		}
		if i >= n {
			return false
		}
		switch c := b[i]; c {
		case '"':
			if i = jsonStringEnd(b, i+1); i < 0 {
				return false
			}
		case '{', '[':
			depth++
			if depth > maxJSONDepth {
				return false
			}
			if depth > 64 {
				deep = append(deep, byte(kinds>>63))
			}
			kinds <<= 1
			if c == '{' {
				kinds |= 1
			}
			i++
			for i < n && b[i] <= ' ' && jsonSpace(b[i]) {
				i++
			}
			if i < n && b[i] == c+2 { // "{}" or "[]": '}' is '{'+2, ']' is '['+2
				i++
				kinds, deep, depth = jsonPop(kinds, deep, depth)
				break // on to what may follow a value
			}
			if c == '{' {
				if i = jsonKeyEnd(b, i); i < 0 {
					return false
				}
			}
			continue
		case 't':
			if n-i < 4 || b[i+1] != 'r' || b[i+2] != 'u' || b[i+3] != 'e' {
				return false
			}
			i += 4
		case 'f':
			if n-i < 5 || b[i+1] != 'a' || b[i+2] != 'l' || b[i+3] != 's' || b[i+4] != 'e' {
				return false
			}
			i += 5
		case 'n':
			if n-i < 4 || b[i+1] != 'u' || b[i+2] != 'l' || b[i+3] != 'l' {
				return false
			}
			i += 4
		default:
			if i = jsonNumberEnd(b, i); i < 0 {
				return false
			}
		}
		// After a value: the end of the document, a comma, or the end of
		// the innermost container.
		for {
			for i < n && b[i] <= ' ' && jsonSpace(b[i]) {
				i++
			}
			if depth == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			c := b[i]
			i++
			if c == ',' {
				if kinds&1 != 0 {
					if i = jsonKeyEnd(b, i); i < 0 {
						return false
					}
				}
				continue value
			}
			if c != "]}"[kinds&1] { // the innermost container's closer
				return false
			}
			kinds, deep, depth = jsonPop(kinds, deep, depth)
		}
	}
}

// jsonPop closes the innermost container.
func jsonPop(kinds uint64, deep []byte, depth int) (uint64, []byte, int) {
	kinds >>= 1
	if depth > 64 {
		kinds |= uint64(deep[len(deep)-1]) << 63
		deep = deep[:len(deep)-1]
	}
	return kinds, deep, depth - 1
}

func jsonSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonKeyEnd checks an object member's key and colon at b[i:], each maybe
// after whitespace, and returns the index after the colon, or -1.
func jsonKeyEnd(b []byte, i int) int {
	n := len(b)
	for i < n && b[i] <= ' ' && jsonSpace(b[i]) {
		i++
	}
	if i >= n || b[i] != '"' {
		return -1
	}
	if i = jsonStringEnd(b, i+1); i < 0 {
		return -1
	}
	for i < n && b[i] <= ' ' && jsonSpace(b[i]) {
		i++
	}
	if i >= n || b[i] != ':' {
		return -1
	}
	return i + 1
}

// jsonStringEnd checks the rest of a string whose opening quote is just
// before b[i] and returns the index after its closing quote, or -1.
func jsonStringEnd(b []byte, i int) int {
	n := len(b)
	for {
		if i = PlainEnd(b, i); i >= n {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= n {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if n-i < 6 || HexValue[b[i+2]]|HexValue[b[i+3]]|HexValue[b[i+4]]|HexValue[b[i+5]] < 0 {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default:
			if b[i] < 0x80 { // a control character
				return -1
			}
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return -1
			}
			i += size
		}
	}
}

// jsonNumberEnd checks the number starting at b[i] and returns the index
// after it, or -1. What follows it is the caller's to check.
func jsonNumberEnd(b []byte, i int) int {
	n := len(b)
	if b[i] == '-' {
		i++
		if i >= n {
			return -1
		}
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i++
		for i < n && jsonDigit(b[i]) {
			i++
		}
	default:
		return -1
	}
	if i < n && b[i] == '.' {
		i++
		if i >= n || !jsonDigit(b[i]) {
			return -1
		}
		for i++; i < n && jsonDigit(b[i]); i++ {
		}
	}
	if i < n && b[i]|0x20 == 'e' {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= n || !jsonDigit(b[i]) {
			return -1
		}
		for i++; i < n && jsonDigit(b[i]); i++ {
		}
	}
	return i
}

func jsonDigit(c byte) bool { return '0' <= c && c <= '9' }

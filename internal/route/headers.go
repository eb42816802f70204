package route

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/jsonscan"
)

// Header keys the router sets itself. The public inbox package repeats
// the first three (inbox.HeaderID, ...): it cannot import this package,
// and TestInboxHeaderNames keeps them equal.
const (
	HeaderID            = "id"
	HeaderEventType     = "event_type"
	HeaderAggregateType = "aggregate_type"
	HeaderSchemaVersion = "schema_version"
	HeaderTraceparent   = "traceparent"
	HeaderBinlogGTID    = "binlog_gtid"
)

// Header keys of a dead-letter record besides HeaderID and
// HeaderBinlogGTID.
const (
	HeaderSourceTable = "source_table" // "database.table" of the outbox row
	HeaderErrorKind   = "error_kind"   // the RowError's Kind
	HeaderError       = "error"        // the RowError's text
)

// appendObjectHeaders appends one header per member of the JSON object doc,
// in document order, duplicates kept. String values become their decoded
// bytes; other values their compact JSON text. Values alias doc unless they
// had to be unescaped or compacted.
func (r *Router) appendObjectHeaders(dst []kgo.RecordHeader, doc []byte) ([]kgo.RecordHeader, *problem) {
	if !json.Valid(doc) {
		return dst, newProblem(KindInvalidHeaders, ErrInvalidHeaders,
			"headers column is not valid JSON; it must be NULL or a JSON object like {\"key\":\"value\"}")
	}
	// doc is valid JSON from here on, so the scanning below need not check
	// syntax: every index it reaches exists.
	i := skipSpace(doc, 0)
	if doc[i] != '{' {
		return dst, newProblem(KindInvalidHeaders, ErrInvalidHeaders,
			"headers column holds a JSON "+jsonKind(doc[i])+"; it must be NULL or a JSON object like {\"key\":\"value\"}")
	}
	i = skipSpace(doc, i+1)
	if doc[i] == '}' {
		return dst, nil
	}
	for {
		end, escaped := scanString(doc, i)
		raw := doc[i+1 : end-1]
		var key string
		if escaped {
			r.unescaped = appendUnescaped(r.unescaped[:0], raw)
			key = r.headerKey(r.unescaped)
		} else {
			key = r.headerKey(raw)
		}
		i = skipSpace(doc, skipSpace(doc, end)+1) // past ':'
		var val []byte
		if doc[i] == '"' {
			end, escaped = scanString(doc, i)
			val = doc[i+1 : end-1]
			if escaped {
				val = appendUnescaped(make([]byte, 0, len(val)), val)
			}
		} else {
			var spaced bool
			end, spaced = scanValue(doc, i)
			val = doc[i:end]
			if spaced {
				val = appendCompact(make([]byte, 0, len(val)), val)
			}
		}
		dst = append(dst, kgo.RecordHeader{Key: key, Value: val})
		i = skipSpace(doc, end)
		if doc[i] == '}' {
			return dst, nil
		}
		i = skipSpace(doc, i+1) // past ','
	}
}

// headerKey returns b as a string, interned in a bounded cache so that the
// usual few distinct keys cost no allocation.
func (r *Router) headerKey(b []byte) string {
	if s, ok := r.keys[string(b)]; ok {
		return s
	}
	if len(r.keys) >= maxCacheEntries {
		clear(r.keys)
	}
	s := string(b)
	r.keys[s] = s
	return s
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) && isSpace(doc[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// scanString returns the offset just past the string starting at doc[i]
// (a '"') and whether it contains escapes.
func scanString(doc []byte, i int) (end int, escaped bool) {
	for i++; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i + 1, escaped
		}
	}
	return len(doc), escaped
}

// scanValue returns the offset just past the non-string value starting at
// doc[i] and whether it contains insignificant space.
func scanValue(doc []byte, i int) (end int, spaced bool) {
	depth := 0
	for i < len(doc) {
		switch c := doc[i]; c {
		case '"':
			i, _ = scanString(doc, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, spaced
			}
			depth--
			if depth == 0 {
				return i + 1, spaced
			}
		case ',':
			if depth == 0 {
				return i, spaced
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, spaced
			}
			spaced = true
		}
		i++
	}
	return i, spaced
}

// appendCompact appends the valid JSON value v without insignificant space.
func appendCompact(dst, v []byte) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			end, _ := scanString(v, i)
			dst = append(dst, v[i:end]...)
			i = end - 1
		case !isSpace(c):
			dst = append(dst, c)
		}
	}
	return dst
}

// appendUnescaped appends the decoded contents of a valid JSON string (raw
// is between the quotes). Like encoding/json, an unpaired surrogate escape
// becomes U+FFFD; unlike it, raw bytes are copied as stored.
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			dst = append(dst, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			rr := hex4(raw[i+1:])
			i += 4
			if utf16.IsSurrogate(rr) {
				if len(raw) > i+2 && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if dec := utf16.DecodeRune(rr, hex4(raw[i+3:])); dec != utf8.RuneError {
						rr = dec
						i += 6
					}
				}
				if utf16.IsSurrogate(rr) {
					rr = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, rr)
		default: // '"', '\\', '/'
			dst = append(dst, raw[i])
		}
	}
	return dst
}

// hex4 decodes four hex digits at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		v := jsonscan.HexValue[c]
		if v < 0 {
			return -1
		}
		r = r<<4 | rune(v)
	}
	return r
}

// jsonKind names the JSON type of the value starting with c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

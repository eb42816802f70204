package binlog

import "unicode/utf8"

// mysqlJSONText turns the compact JSON that go-mysql renders from MySQL's
// binary JSON (encoding/json's output, keys in their stored order, numbers
// as MySQL writes them) into the text MySQL's SELECT prints: a space after
// every ',' and ':' between values, and the characters encoding/json
// escapes for HTML and JavaScript (<, >, &, U+2028, U+2029) as
// themselves. Other escapes (\", \\, \n, \u001f) are MySQL's too.
func mysqlJSONText(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\' && i+5 < len(b) && b[i+1] == 'u':
			if r, ok := htmlEscape(b[i+2 : i+6]); ok {
				out = utf8.AppendRune(out, r)
				i += 5
				continue
			}
			out = append(out, b[i:i+6]...)
			i += 5
			continue
		case inString && c == '\\' && i+1 < len(b):
			out = append(out, c, b[i+1])
			i++
			continue
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == ':'):
			out = append(out, c, ' ')
			continue
		}
		out = append(out, c)
	}
	return out
}

// htmlEscape reads the four hex digits of a \u escape that
// encoding/json writes for HTML and JavaScript safety, not JSON.
func htmlEscape(h []byte) (rune, bool) {
	switch string(h) {
	case "003c":
		return '<', true
	case "003e":
		return '>', true
	case "0026":
		return '&', true
	case "2028":
		return '\u2028', true
	case "2029":
		return '\u2029', true
	}
	return 0, false
}

package binlog

import (
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// maxShown bounds how much of a value a message repeats.
const maxShown = 100

// Readable renders a column value for a message as a person reads it:
// text as it is when it is short, printable ASCII without spaces or
// quotes (UUIDs, GTIDs), quoted otherwise; bytes that are not text (not
// UTF-8, or holding control characters other than tab, CR and LF) as UUID
// text when there are 16 of them (a binary id), else as 0x hex. Long
// values are clipped, saying how long they were. An empty value is
// "(none)".
func Readable(v []byte) string {
	switch {
	case len(v) == 0:
		return "(none)"
	case !textual(v) && len(v) == 16:
		return string(uuidText(v, UUIDStandard))
	case !textual(v):
		n := min(len(v), maxShown/2)
		s := "0x" + hex.EncodeToString(v[:n])
		if n < len(v) {
			s += "…(" + strconv.Itoa(len(v)) + " bytes)"
		}
		return s
	case len(v) <= maxShown && plain(v):
		return string(v)
	case len(v) <= maxShown:
		return strconv.Quote(string(v))
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return strconv.Quote(string(v[:cut])) + "…(" + strconv.Itoa(len(v)) + " bytes)"
}

// textual: valid UTF-8 without control characters other than tab, CR, LF.
func textual(v []byte) bool {
	for _, c := range v {
		if c < ' ' && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	return utf8.Valid(v)
}

// plain: printable ASCII without spaces or quotes, shown unquoted.
func plain(v []byte) bool {
	for _, c := range v {
		if c <= ' ' || c >= 0x7f || c == '"' {
			return false
		}
	}
	return true
}

package gtid

import (
	"errors"
	"fmt"
	"strings"
)

// ErrSyntax is wrapped by every error about malformed GTID or GTID set text.
// The wrapping error names the flavour, the input and the offending piece.
var ErrSyntax = errors.New("invalid GTID syntax")

// ErrFlavor is wrapped by errors about a flavour name that is neither
// "mysql" nor "mariadb".
var ErrFlavor = errors.New("unknown GTID flavor")

// maxQuoted bounds how much of a long input an error message repeats; the
// offending piece is named separately (up to maxPiece).
const maxQuoted = 200

// syntaxError formats a parse failure of input (a whole set when what is
// "GTID set", one GTID when it is "GTID").
func syntaxError(f Flavor, what, input, detail string, args ...any) error {
	return fmt.Errorf("parsing %s %s %s: %w: %s%s", f, what, quoteShort(input, maxQuoted), ErrSyntax, fmt.Sprintf(detail, args...), flavorHint(f, input))
}

// flavorHint tells the operator when the text looks like the other
// flavour's, the likely cause being a misconfigured flavour.
func flavorHint(f Flavor, input string) string {
	colon := strings.IndexByte(input, ':') >= 0
	switch {
	case f == MariaDB && colon:
		return " (this looks like a MySQL GTID; is the flavor set right?)"
	case f == MySQL && !colon && looksMariaDB(input):
		return " (this looks like a MariaDB GTID; is the flavor set right?)"
	}
	return ""
}

// looksMariaDB reports whether s has only digits, dashes, commas and
// spaces, with at least one dash.
func looksMariaDB(s string) bool {
	dash := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '-':
			dash = true
		case isDigit(c), c == ',', isSpace(c):
		default:
			return false
		}
	}
	return dash
}

// quoteShort quotes s, cutting it to at most n bytes first.
func quoteShort(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q...", s[:n])
}

// maxPiece bounds the offending piece an error names.
const maxPiece = 64

// quotePiece quotes a piece of input for an error message.
func quotePiece(s string) string { return quoteShort(s, maxPiece) }

// piece returns the text of s from i up to the next separator in seps (or
// the end), bounded so that an error never repeats megabytes of input.
func piece(s string, i int, seps string) string {
	j := i
	for j < len(s) && j-i < maxPiece && strings.IndexByte(seps, s[j]) < 0 {
		j++
	}
	return s[i:j]
}

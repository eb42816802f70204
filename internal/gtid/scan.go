package gtid

// scanner walks GTID text. Both servers skip ASCII whitespace around the
// separators (MySQL prints ",\n" between uuids), so the scanner does too.
type scanner struct {
	s string
	i int
}

func (p *scanner) eof() bool { return p.i >= len(p.s) }

// peek reports whether the next byte is c.
func (p *scanner) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

// skipSpace skips the bytes MySQL's SKIP_WHITESPACE skips.
func (p *scanner) skipSpace() {
	for p.i < len(p.s) && isSpace(p.s[p.i]) {
		p.i++
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number reads a run of decimal digits as a value no larger than max. It
// returns ok == false if there is no digit or the value overflows max; on
// overflow the digits are still consumed so that the caller can name them.
func (p *scanner) number(max uint64) (v uint64, ok bool) {
	start := p.i
	ok = true
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		d := uint64(p.s[p.i] - '0')
		if ok && v > (max-d)/10 {
			ok = false
		}
		if ok {
			v = v*10 + d
		}
		p.i++
	}
	return v, ok && p.i > start
}

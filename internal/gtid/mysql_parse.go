package gtid

import (
	"slices"
	"strconv"
)

// parseMySQL parses MySQL's Gtid_set text, following the server's grammar
// (sql/rpl_gtid_set.cc, Gtid_set::add_gtid_text): empty elements between
// commas are allowed, a tag applies to the intervals after it until the next
// tag or uuid. Unlike the server it rejects a reversed interval ("5-3",
// which MySQL silently ignores) instead of dropping it.
func parseMySQL(text string) (*Set, error) {
	set := New(MySQL)
	p := scanner{s: text}
	fail := func(detail string, args ...any) (*Set, error) {
		return nil, syntaxError(MySQL, "GTID set", text, detail, args...)
	}
	for {
		p.skipSpace()
		for p.peek(',') {
			p.i++
			p.skipSpace()
		}
		if p.eof() {
			break
		}
		start := p.i
		sid, ok := parseUUID(text[start:min(start+uuidLen, len(text))])
		if !ok {
			return fail("uuid %q is not 8-4-4-4-12 hex digits", piece(text, start, ":,"))
		}
		p.i += uuidLen
		p.skipSpace()
		tag, cur := "", -1 // cur: index of the entry for (sid, tag), found on its first interval
		for p.peek(':') {
			p.i++
			p.skipSpace()
			at := p.i
			switch {
			case !p.eof() && isTagStart(text[at]):
				for !p.eof() && isTagByte(text[p.i]) {
					p.i++
				}
				if p.i-at > maxTagLen {
					return fail("tag %s is longer than %d characters", quotePiece(text[at:p.i]), maxTagLen)
				}
				tag, cur = normalTag(text[at:p.i]), -1
			case !p.eof() && isDigit(text[at]):
				iv, detail := p.mysqlInterval()
				if detail != "" {
					return fail("%s", detail)
				}
				if cur < 0 {
					cur = set.entryForParse(sid, tag)
				}
				// Intervals are collected raw and normalised once at the end.
				set.my[cur].iv = append(set.my[cur].iv, iv)
			default:
				return fail("want an interval or a tag after ':' in the entry of uuid %s, found %q", text[start:start+uuidLen], piece(text, at, ":,"))
			}
			p.skipSpace()
		}
		if !p.eof() && !p.peek(',') {
			return fail("unexpected %q in the entry of uuid %s", piece(text, p.i, ","), text[start:start+uuidLen])
		}
	}
	// Drop uuids and tags that came without intervals, as the server
	// ignores them too, and merge the rest.
	out := set.my[:0]
	for _, e := range set.my {
		if len(e.iv) > 0 {
			e.iv = normalize(e.iv)
			out = append(out, e)
		}
	}
	clear(set.my[len(out):])
	set.my = out
	return set, nil
}

// mysqlInterval reads "a" or "a-b" at a digit. On failure detail says why.
func (p *scanner) mysqlInterval() (iv interval, detail string) {
	at := p.i
	lo, ok := p.number(MaxGNO)
	if !ok {
		return iv, p.rangeDetail(at)
	}
	if lo == 0 {
		return iv, "interval " + strconv.Quote(piece(p.s, at, ":,")) + " starts at 0; transaction numbers start at 1"
	}
	hi := lo
	p.skipSpace()
	if p.peek('-') {
		p.i++
		p.skipSpace()
		n := p.i
		if hi, ok = p.number(MaxGNO); !ok {
			if p.i == n {
				return iv, "interval " + strconv.Quote(piece(p.s, at, ":,")) + " has no end"
			}
			return iv, p.rangeDetail(n)
		}
		if hi < lo {
			return iv, "interval " + quotePiece(p.s[at:p.i]) + " ends before it starts"
		}
	}
	return interval{int64(lo), int64(hi) + 1}, ""
}

func (p *scanner) rangeDetail(at int) string {
	return "transaction number " + strconv.Quote(piece(p.s, at, ":,-")) + " is out of range [1, " + strconv.FormatInt(MaxGNO, 10) + "]"
}

// entryForParse returns the index of the entry for sid and tag, inserting
// an empty one if needed.
func (s *Set) entryForParse(sid [16]byte, tag string) int {
	i, found := s.findMySQL(sid, tag)
	if !found {
		s.my = slices.Insert(s.my, i, mysqlEntry{sid: sid, tag: tag})
	}
	return i
}

// ParseMySQLGTID parses a single MySQL GTID "uuid:n" or "uuid:tag:n", as
// AddMySQL takes it.
func ParseMySQLGTID(g string) (sid [16]byte, tag string, gno int64, err error) {
	return parseOneMySQL(g)
}

// parseOneMySQL parses a single GTID "uuid:n" or "uuid:tag:n".
func parseOneMySQL(g string) (sid [16]byte, tag string, gno int64, err error) {
	fail := func(detail string, args ...any) ([16]byte, string, int64, error) {
		return sid, "", 0, syntaxError(MySQL, "GTID", g, detail, args...)
	}
	p := scanner{s: g}
	p.skipSpace()
	at := p.i
	sid, ok := parseUUID(g[at:min(at+uuidLen, len(g))])
	if !ok {
		return fail("uuid %q is not 8-4-4-4-12 hex digits", piece(g, at, ":"))
	}
	p.i += uuidLen
	p.skipSpace()
	if !p.peek(':') {
		return fail("want uuid:number or uuid:tag:number")
	}
	p.i++
	p.skipSpace()
	if at := p.i; !p.eof() && isTagStart(g[at]) {
		for !p.eof() && isTagByte(g[p.i]) {
			p.i++
		}
		if tag = g[at:p.i]; len(tag) > maxTagLen {
			return fail("tag %s is longer than %d characters", quotePiece(tag), maxTagLen)
		}
		tag = normalTag(tag)
		p.skipSpace()
		if !p.peek(':') {
			return fail("want a transaction number after tag %q", tag)
		}
		p.i++
		p.skipSpace()
	}
	at = p.i
	n, ok := p.number(MaxGNO)
	switch {
	case p.i == at:
		return fail("want a transaction number, found %q", piece(g, at, ""))
	case !ok:
		return fail("%s", p.rangeDetail(at))
	case n == 0:
		return fail("transaction number 0; transaction numbers start at 1")
	}
	p.skipSpace()
	if !p.eof() {
		return fail("unexpected %q after the transaction number", piece(g, p.i, ""))
	}
	return sid, tag, int64(n), nil
}

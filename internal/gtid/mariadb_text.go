package gtid

import (
	"math"
	"strconv"
	"strings"
)

// parseMariaDB parses a MariaDB GTID position "d-s-n,d-s-n". Like the
// server it allows whitespace before each number; like MySQL (and unlike
// MariaDB) it also allows empty elements between commas, so that a
// trailing comma in a hand-written --start does not matter.
func parseMariaDB(text string) (*Set, error) {
	set := New(MariaDB)
	p := scanner{s: text}
	for {
		p.skipSpace()
		for p.peek(',') {
			p.i++
			p.skipSpace()
		}
		if p.eof() {
			break
		}
		at := p.i
		e, detail := p.mariadbGTID()
		if detail == "" {
			p.skipSpace()
			if !p.eof() && !p.peek(',') {
				detail = "unexpected " + strconv.Quote(piece(text, p.i, ",")) + " after GTID " + strconv.Quote(strings.TrimSpace(text[at:p.i]))
			}
		}
		if detail != "" {
			return nil, syntaxError(MariaDB, "GTID set", text, "%s", detail)
		}
		i, found := set.findMariaDB(e.domain)
		if found {
			return nil, syntaxError(MariaDB, "GTID set", text, "domain %d appears twice (%s and %s); a position has one GTID per domain",
				e.domain, FormatMariaDB(set.ma[i].domain, set.ma[i].server, set.ma[i].seq), FormatMariaDB(e.domain, e.server, e.seq))
		}
		set.ma = append(set.ma, mariadbEntry{})
		copy(set.ma[i+1:], set.ma[i:])
		set.ma[i] = e
	}
	return set, nil
}

// mariadbGTID reads "domain-server-seq", whitespace allowed around the
// dashes. On failure detail says why.
func (p *scanner) mariadbGTID() (e mariadbEntry, detail string) {
	at := p.i
	var v [3]uint64
	for k, name := range [3]string{"domain", "server id", "sequence number"} {
		if k > 0 {
			p.skipSpace()
			if !p.peek('-') {
				return e, "GTID " + strconv.Quote(piece(p.s, at, ",")) + " is not domain-server-seq"
			}
			p.i++
			p.skipSpace()
		}
		max := uint64(math.MaxUint32)
		if k == 2 {
			max = math.MaxUint64
		}
		n := p.i
		var ok bool
		if v[k], ok = p.number(max); !ok {
			if p.i == n {
				return e, "GTID " + strconv.Quote(piece(p.s, at, ",")) + " is not domain-server-seq"
			}
			return e, name + " " + strconv.Quote(p.s[n:p.i]) + " is out of range [0, " + strconv.FormatUint(max, 10) + "]"
		}
	}
	return mariadbEntry{domain: uint32(v[0]), server: uint32(v[1]), seq: v[2]}, ""
}

// parseOneMariaDB parses a single GTID "domain-server-seq".
func parseOneMariaDB(g string) (domain, server uint32, seq uint64, err error) {
	p := scanner{s: g}
	p.skipSpace()
	e, detail := p.mariadbGTID()
	if detail == "" {
		p.skipSpace()
		if !p.eof() {
			detail = "unexpected " + strconv.Quote(piece(g, p.i, "")) + " after the sequence number"
		}
	}
	if detail != "" {
		return 0, 0, 0, syntaxError(MariaDB, "GTID", g, "%s", detail)
	}
	return e.domain, e.server, e.seq, nil
}

// AppendMariaDB appends the GTID domain-server-seq to dst. It does not
// allocate when dst has room.
func AppendMariaDB(dst []byte, domain, server uint32, seq uint64) []byte {
	dst = strconv.AppendUint(dst, uint64(domain), 10)
	dst = append(dst, '-')
	dst = strconv.AppendUint(dst, uint64(server), 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, seq, 10)
}

// FormatMariaDB returns the GTID domain-server-seq.
func FormatMariaDB(domain, server uint32, seq uint64) string {
	var buf [10 + 1 + 10 + 1 + 20]byte
	return string(AppendMariaDB(buf[:0], domain, server, seq))
}

// mariadbString renders the canonical text with one allocation.
func (s *Set) mariadbString() string {
	if len(s.ma) == 0 {
		return ""
	}
	n := len(s.ma) - 1 // commas
	for _, e := range s.ma {
		n += decimalLen(uint64(e.domain)) + 1 + decimalLen(uint64(e.server)) + 1 + decimalLen(e.seq)
	}
	var scratch [10 + 1 + 10 + 1 + 20]byte
	var b strings.Builder
	b.Grow(n)
	for i, e := range s.ma {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(AppendMariaDB(scratch[:0], e.domain, e.server, e.seq))
	}
	return b.String()
}

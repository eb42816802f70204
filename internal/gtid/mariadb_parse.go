package gtid

import (
	"math"
	"slices"
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
				detail = "unexpected " + strconv.Quote(piece(text, p.i, ",")) + " after GTID " + quotePiece(strings.TrimSpace(text[at:p.i]))
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
		set.ma = slices.Insert(set.ma, i, e)
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
			return e, name + " " + quotePiece(p.s[n:p.i]) + " is out of range [0, " + strconv.FormatUint(max, 10) + "]"
		}
	}
	return mariadbEntry{domain: uint32(v[0]), server: uint32(v[1]), seq: v[2]}, ""
}

// ParseMariaDBGTID parses a single MariaDB GTID "domain-server-seq", as
// AddMariaDB takes it.
func ParseMariaDBGTID(g string) (domain, server uint32, seq uint64, err error) {
	return parseOneMariaDB(g)
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

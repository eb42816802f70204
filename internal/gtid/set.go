package gtid

import "fmt"

// Set is a GTID set in one flavour's semantics: for MySQL the set of
// executed transactions (uuid[:tag]:intervals), for MariaDB a GTID
// position: the last domain-server-seq of each replication domain.
//
// The zero value is not usable; use New or Parse. Methods taking another
// Set accept one of the other flavour and treat the two as sharing no
// GTID: Equal is false, Contains holds only for an empty argument and
// Subtract removes nothing.
type Set struct {
	flavor Flavor

	// Exactly one of these is used, by flavour. Both are sorted by key
	// and hold no empty entries, so equal sets have equal slices.
	my []mysqlEntry   // by (sid, tag), untagged first
	ma []mariadbEntry // by domain

	// hint is the index of the entry the last Add touched; consecutive
	// transactions nearly always come from the same uuid/tag or domain.
	hint int
}

// New returns an empty set of flavour f. It panics if f is neither MySQL
// nor MariaDB: flavours come from constants or ParseFlavor, so another value
// is a bug in the caller.
func New(f Flavor) *Set {
	if !f.valid() {
		panic(fmt.Sprintf("gtid: New with unknown flavor %q", f))
	}
	return &Set{flavor: f}
}

// Parse parses a GTID set in the server-native syntax of flavour f:
// "uuid:1-5:7,uuid2:tag:1-3" for MySQL, "0-1-42,1-2-7" for MariaDB.
// Whitespace, including newlines, is allowed around the separators; the
// empty string is the empty set. Errors wrap ErrSyntax (or ErrFlavor) and
// name the offending piece.
//
// MySQL: a uuid may repeat and intervals may overlap or come in any order
// (they are merged, as the server does); an interval "a-b" needs 1 <= a <=
// b <= MaxGNO. A uuid or tag without intervals adds nothing, as on the
// server. Not accepted: the '+' prefix of SET GTID_PURGED, ANONYMOUS, and
// the braced or dash-less uuid forms, which no server prints. MariaDB:
// each domain may appear only once.
func Parse(f Flavor, s string) (*Set, error) {
	switch f {
	case MySQL:
		return parseMySQL(s)
	case MariaDB:
		return parseMariaDB(s)
	}
	return nil, fmt.Errorf("parsing GTID set %s: %w %q (want %q or %q)", quoteShort(s, maxQuoted), ErrFlavor, f, MySQL, MariaDB)
}

// Add parses one GTID of s's flavour ("uuid:n", "uuid:tag:n" or
// "domain-server-seq") and adds it as AddMySQL or AddMariaDB would.
func (s *Set) Add(g string) error {
	switch s.flavor {
	case MySQL:
		sid, tag, gno, err := parseOneMySQL(g)
		if err != nil {
			return err
		}
		s.AddMySQL(sid, tag, gno)
		return nil
	case MariaDB:
		domain, server, seq, err := parseOneMariaDB(g)
		if err != nil {
			return err
		}
		s.AddMariaDB(domain, server, seq)
		return nil
	}
	return fmt.Errorf("adding GTID %q: %w %q", g, ErrFlavor, s.flavor)
}

// Flavor returns the flavour whose semantics s follows.
func (s *Set) Flavor() Flavor { return s.flavor }

// String returns s in canonical server-native syntax; see the package
// comment. The empty set is "".
func (s *Set) String() string {
	if s.flavor == MariaDB {
		return s.mariadbString()
	}
	return s.mysqlString()
}

// Clone returns a deep copy of s.
func (s *Set) Clone() *Set {
	c := &Set{flavor: s.flavor}
	if len(s.ma) > 0 {
		c.ma = append([]mariadbEntry(nil), s.ma...)
	}
	if len(s.my) > 0 {
		c.my = cloneMySQL(s.my)
	}
	return c
}

// IsEmpty reports whether s holds no GTID.
func (s *Set) IsEmpty() bool { return len(s.my) == 0 && len(s.ma) == 0 }

// Equal reports whether s and o are the same set of the same flavour.
func (s *Set) Equal(o *Set) bool {
	if s.flavor != o.flavor {
		return false
	}
	if s.flavor == MariaDB {
		return mariadbEqual(s.ma, o.ma)
	}
	return mysqlEqual(s.my, o.my)
}

// Contains reports whether s covers o. MySQL: o ⊆ s. MariaDB: every domain
// of o is in s with a sequence number at least o's (server ids ignored).
func (s *Set) Contains(o *Set) bool {
	if s.flavor != o.flavor {
		return o.IsEmpty()
	}
	if s.flavor == MariaDB {
		return mariadbContains(s.ma, o.ma)
	}
	return mysqlContains(s.my, o.my)
}

// Subtract returns a new set with what s has beyond o; s and o are not
// changed. MySQL: s \ o, the transactions of s missing from o (this names
// purged or unpublished GTIDs). MariaDB: the entries of s whose domain o
// lacks or whose sequence number is greater than o's.
func (s *Set) Subtract(o *Set) *Set {
	if s.flavor != o.flavor {
		return s.Clone()
	}
	r := &Set{flavor: s.flavor}
	if s.flavor == MariaDB {
		r.ma = mariadbSubtract(s.ma, o.ma)
	} else {
		r.my = mysqlSubtract(s.my, o.my)
	}
	return r
}

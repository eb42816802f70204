package gtid

import "slices"

// mariadbEntry is the position of one replication domain: its last GTID.
type mariadbEntry struct {
	domain uint32
	server uint32
	seq    uint64
}

// AddMariaDB sets the position of domain to domain-serverID-seq, replacing
// what the set had for that domain: a MariaDB position keeps only the last
// GTID of each domain, whatever its sequence number. It does not allocate
// when the domain is already in the set. It panics on a MySQL set.
func (s *Set) AddMariaDB(domain, serverID uint32, seq uint64) {
	if s.flavor != MariaDB {
		s.wrongFlavor("AddMariaDB")
	}
	if h := s.hint; h < len(s.ma) && s.ma[h].domain == domain {
		s.ma[h].server, s.ma[h].seq = serverID, seq
		return
	}
	i, found := s.findMariaDB(domain)
	if !found {
		s.ma = slices.Insert(s.ma, i, mariadbEntry{domain: domain})
	}
	s.hint = i
	s.ma[i].server, s.ma[i].seq = serverID, seq
}

// ContainsMariaDB reports whether the position s has reached sequence
// number seq in domain, that is, whether a GTID domain-*-seq is at or
// before s. It is false for a MySQL set.
func (s *Set) ContainsMariaDB(domain uint32, seq uint64) bool {
	if s.flavor != MariaDB {
		return false
	}
	i, found := s.findMariaDB(domain)
	return found && s.ma[i].seq >= seq
}

// findMariaDB returns the index of domain's entry, or where to insert it.
func (s *Set) findMariaDB(domain uint32) (int, bool) {
	lo, hi := 0, len(s.ma)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.ma[m].domain < domain {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s.ma) && s.ma[lo].domain == domain
}

func mariadbEqual(a, b []mariadbEntry) bool { return slices.Equal(a, b) }

// mariadbContains reports whether a has reached b in every domain of b;
// both are sorted by domain.
func mariadbContains(a, b []mariadbEntry) bool {
	i := 0
	for _, y := range b {
		for i < len(a) && a[i].domain < y.domain {
			i++
		}
		if i == len(a) || a[i].domain != y.domain || a[i].seq < y.seq {
			return false
		}
	}
	return true
}

// mariadbSubtract returns the entries of a that b lacks or has not reached.
func mariadbSubtract(a, b []mariadbEntry) []mariadbEntry {
	var out []mariadbEntry
	j := 0
	for _, x := range a {
		for j < len(b) && b[j].domain < x.domain {
			j++
		}
		if j == len(b) || b[j].domain != x.domain || x.seq > b[j].seq {
			out = append(out, x)
		}
	}
	return out
}

package gtid

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
)

// MaxGNO is the largest MySQL transaction number (GNO) a set can hold; the
// server reserves math.MaxInt64 as its exclusive end.
const MaxGNO = math.MaxInt64 - 1

// mysqlEntry holds the transactions of one uuid and tag ("" = untagged).
type mysqlEntry struct {
	sid [16]byte
	tag string     // lower case, valid or ""
	iv  []interval // normal, non-empty
}

// compareKey orders entries by uuid bytes (the same order as lower-case hex),
// then tag, so the untagged entry of a uuid comes first, as MySQL prints it.
func compareKey(sidA [16]byte, tagA string, sidB [16]byte, tagB string) int {
	if c := bytes.Compare(sidA[:], sidB[:]); c != 0 {
		return c
	}
	return strings.Compare(tagA, tagB)
}

// AddMySQL adds transaction sid[:tag]:gno to a MySQL set. Adding the
// transaction after the last one of the same uuid and tag (the binlog's
// common case) is O(1) and does not allocate; any other order is handled
// too, merging intervals that come to touch.
//
// tag is "" for an untagged GTID; it is lower-cased (allocating only if it
// has upper case). Like gno in [1, MaxGNO], a valid tag (ValidTag) is a
// precondition, as the server guarantees both for what it writes to the
// binlog: AddMySQL panics on a bad gno, on a bad tag the first time it sees
// it, and on a MariaDB set. Use Add for text from elsewhere.
func (s *Set) AddMySQL(sid [16]byte, tag string, gno int64) {
	if s.flavor != MySQL {
		s.wrongFlavor("AddMySQL")
	}
	if gno < 1 || gno > MaxGNO {
		panic(fmt.Sprintf("gtid: AddMySQL with transaction number %d outside [1, %d]", gno, int64(MaxGNO)))
	}
	if h := s.hint; h < len(s.my) && s.my[h].sid == sid && s.my[h].tag == tag {
		s.my[h].iv = addGNO(s.my[h].iv, gno)
		return
	}
	tag = normalTag(tag)
	i, found := s.findMySQL(sid, tag)
	if !found {
		if tag != "" && !ValidTag(tag) {
			panic(fmt.Sprintf("gtid: AddMySQL with invalid tag %q", tag))
		}
		s.my = slices.Insert(s.my, i, mysqlEntry{sid: sid, tag: tag})
	}
	s.hint = i
	s.my[i].iv = addGNO(s.my[i].iv, gno)
}

// ContainsMySQL reports whether transaction sid[:tag]:gno is in s. It is
// false for a MariaDB set.
func (s *Set) ContainsMySQL(sid [16]byte, tag string, gno int64) bool {
	if s.flavor != MySQL {
		return false
	}
	i, found := s.findMySQL(sid, normalTag(tag))
	return found && containsGNO(s.my[i].iv, gno)
}

// findMySQL returns the index of the entry for sid and tag, or where to
// insert it.
func (s *Set) findMySQL(sid [16]byte, tag string) (int, bool) {
	lo, hi := 0, len(s.my)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareKey(s.my[m].sid, s.my[m].tag, sid, tag) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s.my) && s.my[lo].sid == sid && s.my[lo].tag == tag
}

func (s *Set) wrongFlavor(method string) {
	panic(fmt.Sprintf("gtid: %s on a %q set", method, s.flavor))
}

// cloneMySQL deep-copies entries with one allocation for all intervals.
// Each copy's capacity ends at its own length, so a later append to one
// entry reallocates instead of overwriting the next.
func cloneMySQL(my []mysqlEntry) []mysqlEntry {
	n := 0
	for _, e := range my {
		n += len(e.iv)
	}
	all := make([]interval, 0, n)
	out := make([]mysqlEntry, len(my))
	for i, e := range my {
		start := len(all)
		all = append(all, e.iv...)
		out[i] = mysqlEntry{sid: e.sid, tag: e.tag, iv: all[start:len(all):len(all)]}
	}
	return out
}

func mysqlEqual(a, b []mysqlEntry) bool {
	return slices.EqualFunc(a, b, func(x, y mysqlEntry) bool {
		return x.sid == y.sid && x.tag == y.tag && slices.Equal(x.iv, y.iv)
	})
}

// mysqlContains reports whether a ⊇ b; both are sorted.
func mysqlContains(a, b []mysqlEntry) bool {
	i := 0
	for _, y := range b {
		for i < len(a) && compareKey(a[i].sid, a[i].tag, y.sid, y.tag) < 0 {
			i++
		}
		if i == len(a) || a[i].sid != y.sid || a[i].tag != y.tag || !containsIntervals(a[i].iv, y.iv) {
			return false
		}
	}
	return true
}

// mysqlSubtract returns a \ b as new entries; both are sorted.
func mysqlSubtract(a, b []mysqlEntry) []mysqlEntry {
	var out []mysqlEntry
	j := 0
	for _, x := range a {
		for j < len(b) && compareKey(b[j].sid, b[j].tag, x.sid, x.tag) < 0 {
			j++
		}
		var iv []interval
		if j < len(b) && b[j].sid == x.sid && b[j].tag == x.tag {
			iv = subtractIntervals(x.iv, b[j].iv)
		} else {
			iv = slices.Clone(x.iv)
		}
		if len(iv) > 0 {
			out = append(out, mysqlEntry{sid: x.sid, tag: x.tag, iv: iv})
		}
	}
	return out
}

package kafka

import (
	"bytes"
	"encoding/hex"
	"slices"
)

// IDSet is a set of event ids, built by adding them all, then queried.
// A canonical lower-case UUID is kept as its 16 bytes in one sorted
// array (16 bytes of memory per id: ScanIDs reserves the room of the
// records it will read, at most its cap, so the array is not grown by
// copying), any other id as a string in a map. Not safe for concurrent
// use.
type IDSet struct {
	uuids  [][16]byte // uuids[:sorted] sorted and distinct, the rest as added
	sorted int
	others map[string]struct{}
}

// NewIDSet returns an empty set.
func NewIDSet() *IDSet {
	return &IDSet{others: map[string]struct{}{}}
}

// reserve makes room for n UUID ids without growing the array again.
func (s *IDSet) reserve(n int) {
	if n > cap(s.uuids) {
		s.uuids = slices.Grow(s.uuids, n-len(s.uuids))
	}
}

// Add adds id.
func (s *IDSet) Add(id []byte) {
	u, ok := uuidBytes(id)
	if !ok {
		s.others[string(id)] = struct{}{}
		return
	}
	if len(s.uuids) == cap(s.uuids) && s.sorted < len(s.uuids) {
		s.seal() // drop the duplicates before growing
	}
	s.uuids = append(s.uuids, u)
}

// seal sorts the UUIDs and drops the duplicates.
func (s *IDSet) seal() {
	if s.sorted == len(s.uuids) {
		return
	}
	slices.SortFunc(s.uuids, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	s.uuids = slices.Compact(s.uuids)
	s.sorted = len(s.uuids)
}

// Has reports whether id is in the set.
func (s *IDSet) Has(id []byte) bool {
	u, ok := uuidBytes(id)
	if !ok {
		_, has := s.others[string(id)]
		return has
	}
	s.seal()
	_, has := slices.BinarySearchFunc(s.uuids, u, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	return has
}

// Len is the number of distinct ids in the set.
func (s *IDSet) Len() int {
	s.seal()
	return len(s.uuids) + len(s.others)
}

// atMost is Len or more, without sorting: duplicates added since the
// last sort are counted.
func (s *IDSet) atMost() int { return len(s.uuids) + len(s.others) }

// uuidBytes parses a canonical 36-character UUID (either case); a UUID
// in upper case is another event id than in lower case, so only lower
// case is packed.
func uuidBytes(id []byte) ([16]byte, bool) {
	var u [16]byte
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return u, false
	}
	for _, c := range id {
		if c >= 'A' && c <= 'F' {
			return u, false
		}
	}
	var hx [32]byte
	copy(hx[0:8], id[0:8])
	copy(hx[8:12], id[9:13])
	copy(hx[12:16], id[14:18])
	copy(hx[16:20], id[19:23])
	copy(hx[20:32], id[24:36])
	if _, err := hex.Decode(u[:], hx[:]); err != nil {
		return u, false
	}
	return u, true
}

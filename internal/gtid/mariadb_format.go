package gtid

import (
	"strconv"
	"strings"
)

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

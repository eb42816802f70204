package gtid

import (
	"strconv"
	"strings"
)

// AppendMySQL appends the GTID sid[:tag]:gno in MySQL syntax to dst, the
// uuid and tag lower case. It does not allocate when dst has room.
func AppendMySQL(dst []byte, sid [16]byte, tag string, gno int64) []byte {
	dst = appendUUID(dst, sid)
	if tag != "" {
		dst = append(dst, ':')
		for i := 0; i < len(tag); i++ {
			c := tag[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
	}
	dst = append(dst, ':')
	return strconv.AppendInt(dst, gno, 10)
}

// FormatMySQL returns the GTID sid[:tag]:gno in MySQL syntax.
func FormatMySQL(sid [16]byte, tag string, gno int64) string {
	var buf [uuidLen + 1 + maxTagLen + 1 + 20]byte
	return string(AppendMySQL(buf[:0], sid, tag, gno))
}

// mysqlString renders the canonical text with one allocation: the exact
// length is computed first and pieces go through a stack buffer.
func (s *Set) mysqlString() string {
	if len(s.my) == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(s.mysqlLen())
	var scratch [2*20 + 2]byte
	for i, e := range s.my {
		if i == 0 || e.sid != s.my[i-1].sid {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(appendUUID(scratch[:0], e.sid))
		}
		if e.tag != "" {
			b.WriteByte(':')
			b.WriteString(e.tag)
		}
		for _, x := range e.iv {
			b.Write(appendInterval(scratch[:0], x))
		}
	}
	return b.String()
}

// mysqlLen is the exact length of mysqlString.
func (s *Set) mysqlLen() int {
	n := 0
	for i, e := range s.my {
		if i == 0 || e.sid != s.my[i-1].sid {
			n += uuidLen + 1 // uuid and the comma before it (one too many overall)
		}
		if e.tag != "" {
			n += 1 + len(e.tag)
		}
		for _, x := range e.iv {
			n += 1 + decimalLen(uint64(x.start))
			if x.end-1 > x.start {
				n += 1 + decimalLen(uint64(x.end-1))
			}
		}
	}
	return n - 1
}

// decimalLen is the number of decimal digits of v.
func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

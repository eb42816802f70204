package gtid

import (
	"strings"
	"testing"
)

func BenchmarkAddMySQLSequential(b *testing.B) {
	sid := mustUUID(b, u2)
	s := New(MySQL)
	b.ReportAllocs()
	var gno int64
	for b.Loop() {
		gno++
		s.AddMySQL(sid, "", gno)
	}
}

// BenchmarkAddMySQLInterleaved alternates two uuids, defeating the
// last-entry hint: the cost of the binary search over entries.
func BenchmarkAddMySQLInterleaved(b *testing.B) {
	sids := [4][16]byte{mustUUID(b, u1), mustUUID(b, u2), mustUUID(b, u3), mustUUID(b, u1)}
	s := New(MySQL)
	b.ReportAllocs()
	var gno int64
	for b.Loop() {
		gno++
		s.AddMySQL(sids[gno&3], "", gno/4+1)
	}
}

// BenchmarkAddMySQLGaps adds every other transaction, then fills the gaps
// from the back, each fill merging two intervals: the worst case.
func BenchmarkAddMySQLGaps(b *testing.B) {
	sid := mustUUID(b, u2)
	const n = 1000
	b.ReportAllocs()
	for b.Loop() {
		s := New(MySQL)
		for g := int64(1); g <= 2*n; g += 2 {
			s.AddMySQL(sid, "", g)
		}
		for g := int64(2 * n); g >= 2; g -= 2 {
			s.AddMySQL(sid, "", g)
		}
	}
}

func BenchmarkAddMariaDB(b *testing.B) {
	s := New(MariaDB)
	s.AddMariaDB(0, 1, 1)
	b.ReportAllocs()
	var seq uint64
	for b.Loop() {
		seq++
		s.AddMariaDB(0, 1, seq)
	}
}

// benchSet is a typical @@gtid_executed after some failovers: a few uuids,
// a gap or two, one tag.
func benchSet(b *testing.B) *Set {
	return mustParse(b, MySQL, expand("U1:1-1234567,U2:1-98765:98767-123456789:tag_a:1-500,U3:1-42:44"))
}

func BenchmarkString(b *testing.B) {
	s := benchSet(b)
	b.ReportAllocs()
	for b.Loop() {
		sink = s.String()
	}
}

func BenchmarkStringMariaDB(b *testing.B) {
	s := mustParse(b, MariaDB, "0-1-123456789,1-2-42,7-3-1000")
	b.ReportAllocs()
	for b.Loop() {
		sink = s.String()
	}
}

func BenchmarkParseMySQL(b *testing.B) {
	text := strings.ReplaceAll(benchSet(b).String(), ",", ",\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(MySQL, text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkContainsMySQL(b *testing.B) {
	s, o := benchSet(b), benchSet(b)
	b.ReportAllocs()
	for b.Loop() {
		if !s.Contains(o) {
			b.Fatal("not contained")
		}
	}
}

func BenchmarkAppendMySQL(b *testing.B) {
	sid := mustUUID(b, u2)
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	var gno int64 = 1 << 40
	for b.Loop() {
		gno++
		buf = AppendMySQL(buf[:0], sid, "", gno)
	}
}

func BenchmarkAppendMariaDB(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	var seq uint64 = 1 << 40
	for b.Loop() {
		seq++
		buf = AppendMariaDB(buf[:0], 0, 1, seq)
	}
}

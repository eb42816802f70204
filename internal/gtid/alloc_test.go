package gtid

import "testing"

// sink keeps results alive so that the compiler cannot elide them.
var sink string

// The per-transaction operations must not allocate; these tests make a
// regression fail instead of merely show up in a benchmark.
func TestHotPathAllocations(t *testing.T) {
	sid1, sid2 := mustUUID(t, u1), mustUUID(t, u2)
	my := New(MySQL)
	my.AddMySQL(sid1, "", 1)
	my.AddMySQL(sid2, "t", 1)
	var gno1, gno2 int64 = 1, 1
	ma := New(MariaDB)
	ma.AddMariaDB(0, 1, 1)
	ma.AddMariaDB(1, 1, 1)
	var seq uint64 = 1
	buf := make([]byte, 0, 128)

	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"AddMySQL sequential", func() { gno1++; my.AddMySQL(sid1, "", gno1) }},
		{"AddMySQL alternating uuids", func() { gno1++; gno2++; my.AddMySQL(sid1, "", gno1); my.AddMySQL(sid2, "t", gno2) }},
		{"AddMySQL duplicate", func() { my.AddMySQL(sid1, "", 1) }},
		{"AddMariaDB", func() { seq++; ma.AddMariaDB(0, 1, seq) }},
		{"AddMariaDB alternating domains", func() { seq++; ma.AddMariaDB(0, 1, seq); ma.AddMariaDB(1, 2, seq) }},
		{"ContainsMySQL", func() { my.ContainsMySQL(sid1, "", 1) }},
		{"ContainsMariaDB", func() { ma.ContainsMariaDB(0, 1) }},
		{"AppendMySQL", func() { buf = AppendMySQL(buf[:0], sid2, "t", gno2) }},
		{"AppendMariaDB", func() { buf = AppendMariaDB(buf[:0], 0, 1, seq) }},
	} {
		if n := testing.AllocsPerRun(100, tc.f); n != 0 {
			t.Errorf("%s: %v allocations, want 0", tc.name, n)
		}
	}
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"MySQL String", func() { sink = my.String() }},
		{"MariaDB String", func() { sink = ma.String() }},
		{"FormatMySQL", func() { sink = FormatMySQL(sid1, "", gno1) }},
		{"FormatMariaDB", func() { sink = FormatMariaDB(0, 1, seq) }},
	} {
		if n := testing.AllocsPerRun(100, tc.f); n != 1 {
			t.Errorf("%s: %v allocations, want 1 (the string)", tc.name, n)
		}
	}
}

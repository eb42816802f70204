package gtid

import (
	"errors"
	"strings"
	"testing"
)

func TestParseMariaDBCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{" \n", ""},
		{"0-1-42", "0-1-42"},
		{"1-2-7,0-1-42", "0-1-42,1-2-7"},
		{"1-2-7,\n 0-1-42", "0-1-42,1-2-7"},
		{" 0 - 1 - 42 ", "0-1-42"},
		{"0-1-0", "0-1-0"},
		{"000-001-042", "0-1-42"},
		{"0-1-1,,2-1-1,", "0-1-1,2-1-1"},
		{"4294967295-4294967295-18446744073709551615", "4294967295-4294967295-18446744073709551615"},
		{"10-1-5,2-1-6,1-1-7", "1-1-7,2-1-6,10-1-5"},
	} {
		s := mustParse(t, MariaDB, tc.in)
		if got := s.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		if again := mustParse(t, MariaDB, tc.want); !again.Equal(s) || again.String() != tc.want {
			t.Errorf("Parse(%q) = %q, not Equal to Parse(%q)", tc.want, again, tc.in)
		}
		if s.Flavor() != MariaDB || s.IsEmpty() != (tc.want == "") {
			t.Errorf("Parse(%q): Flavor() = %q, IsEmpty() = %v", tc.in, s.Flavor(), s.IsEmpty())
		}
	}
}

func TestParseMariaDBErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0-1", `GTID "0-1" is not domain-server-seq`},
		{"0", `GTID "0" is not domain-server-seq`},
		{"0-1-", `GTID "0-1-" is not domain-server-seq`},
		{"a-b-c", `GTID "a-b-c" is not domain-server-seq`},
		{"-1-1-1", `GTID "-1-1-1" is not`},
		{"0-1-2-3", `unexpected "-3" after GTID "0-1-2"`},
		{"0-1-2x", `unexpected "x" after GTID "0-1-2"`},
		{"0-1-2 3", `unexpected "3" after GTID "0-1-2"`},
		{"4294967296-1-1", `domain "4294967296" is out of range [0, 4294967295]`},
		{"0-4294967296-1", `server id "4294967296" is out of range [0, 4294967295]`},
		{"0-1-18446744073709551616", `sequence number "18446744073709551616" is out of range [0, 18446744073709551615]`},
		{"0-1-5,1-1-1,0-2-7", `domain 0 appears twice (0-1-5 and 0-2-7); a position has one GTID per domain`},
		{u2 + ":1", `GTID "` + u2 + `:1" is not domain-server-seq (this looks like a MySQL GTID; is the flavor set right?)`},
	} {
		_, err := Parse(MariaDB, tc.in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", tc.in)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, ErrSyntax) || !strings.HasPrefix(msg, "parsing mariadb GTID set ") || !strings.Contains(msg, tc.want) {
			t.Errorf("Parse(%q) error\n  %s\nwant ErrSyntax containing\n  %s", tc.in, msg, tc.want)
		}
	}
	_, err := Parse(MariaDB, "0-1-x")
	if want := `parsing mariadb GTID set "0-1-x": invalid GTID syntax: GTID "0-1-x" is not domain-server-seq`; err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestAddMariaDB(t *testing.T) {
	s := New(MariaDB)
	s.AddMariaDB(1, 1, 10)
	s.AddMariaDB(0, 1, 5)
	s.AddMariaDB(0, 2, 3) // replaces, even backwards: position semantics
	s.AddMariaDB(7, 9, 1)
	s.AddMariaDB(1, 1, 11)
	checkInvariants(t, s)
	if got, want := s.String(), "0-2-3,1-1-11,7-9-1"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if err := s.Add(" 7-3-2 "); err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "0-2-3,1-1-11,7-3-2"; got != want {
		t.Errorf("after Add: %q, want %q", got, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"0-1", `parsing mariadb GTID "0-1": invalid GTID syntax: GTID "0-1" is not domain-server-seq`},
		{"0-1-2,1-1-1", `parsing mariadb GTID "0-1-2,1-1-1": invalid GTID syntax: unexpected ",1-1-1" after the sequence number`},
	} {
		if err := s.Add(tc.in); err == nil || !errors.Is(err, ErrSyntax) || err.Error() != tc.want {
			t.Errorf("Add(%q) = %v\nwant %s", tc.in, err, tc.want)
		}
	}
	for _, tc := range []struct {
		domain uint32
		seq    uint64
		want   bool
	}{{0, 3, true}, {0, 2, true}, {0, 4, false}, {1, 11, true}, {2, 0, false}} {
		if got := s.ContainsMariaDB(tc.domain, tc.seq); got != tc.want {
			t.Errorf("ContainsMariaDB(%d, %d) = %v", tc.domain, tc.seq, got)
		}
	}
}

func TestContainsSubtractMariaDB(t *testing.T) {
	for _, tc := range []struct {
		a, b    string
		aHasB   bool
		aMinusB string
	}{
		{a: "", b: "", aHasB: true},
		{a: "0-1-10", b: "", aHasB: true, aMinusB: "0-1-10"},
		{a: "", b: "0-1-10"},
		{a: "0-1-10,1-1-5", b: "0-2-10", aHasB: true, aMinusB: "1-1-5"}, // server ids do not matter
		{a: "0-1-10,1-1-5", b: "0-1-11", aMinusB: "1-1-5"},
		{a: "0-1-10,1-1-5", b: "2-1-1", aMinusB: "0-1-10,1-1-5"},
		{a: "0-1-10,1-1-5,2-1-1", b: "0-1-10,1-1-3", aHasB: true, aMinusB: "1-1-5,2-1-1"},
		{a: "0-1-10,5-1-1", b: "1-1-1,3-1-1,5-1-1", aMinusB: "0-1-10"},
	} {
		a, b := mustParse(t, MariaDB, tc.a), mustParse(t, MariaDB, tc.b)
		if got := a.Contains(b); got != tc.aHasB {
			t.Errorf("%q.Contains(%q) = %v", tc.a, tc.b, got)
		}
		if !a.Contains(a) || !a.Subtract(a).IsEmpty() {
			t.Errorf("%q does not contain itself", tc.a)
		}
		d := a.Subtract(b)
		checkInvariants(t, d)
		if got := d.String(); got != tc.aMinusB {
			t.Errorf("%q.Subtract(%q) = %q, want %q", tc.a, tc.b, got, tc.aMinusB)
		}
		if a.String() != mustParse(t, MariaDB, tc.a).String() {
			t.Errorf("Subtract changed its receiver")
		}
	}
	// Equal compares server ids too: it is the identity of the text.
	if mustParse(t, MariaDB, "0-1-10").Equal(mustParse(t, MariaDB, "0-2-10")) {
		t.Errorf("positions with different server ids are Equal")
	}
}

func TestCloneMariaDB(t *testing.T) {
	s := mustParse(t, MariaDB, "0-1-10,1-1-5")
	c := s.Clone()
	c.AddMariaDB(0, 1, 11)
	if s.String() != "0-1-10,1-1-5" || c.String() != "0-1-11,1-1-5" {
		t.Errorf("clone shares state: %q, %q", s, c)
	}
}

func TestAppendMariaDB(t *testing.T) {
	if got := string(AppendMariaDB([]byte("x"), 0, 1, 42)); got != "x0-1-42" {
		t.Errorf("AppendMariaDB = %q", got)
	}
	want := "4294967295-4294967295-18446744073709551615"
	if got := FormatMariaDB(1<<32-1, 1<<32-1, 1<<64-1); got != want {
		t.Errorf("FormatMariaDB = %q, want %q", got, want)
	}
}

package gtid

import (
	"errors"
	"strings"
	"testing"
)

func TestParseMySQLCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{" \n\t", ""},
		{",,", ""},
		{"U1:1-5", "U1:1-5"},
		{"U1:7", "U1:7"},
		{"U1:5-5", "U1:5"},
		{strings.ToUpper(u2) + ":1-5", "U2:1-5"},
		{"U3:1-3,\nU2:5,\nU1:9", "U1:9,U2:5,U3:1-3"},             // sorted by uuid, MySQL's ",\n"
		{"U1:1-3:4-6", "U1:1-6"},                                 // adjacent intervals merge
		{"U1:7:1-3:5", "U1:1-3:5:7"},                             // out of order
		{"U1:1-5,U1:3-9", "U1:1-9"},                              // repeated uuid, overlap
		{"U1:1-10:2-3", "U1:1-10"},                               // contained
		{"U1:1:3:5:2:4", "U1:1-5"},                               // closing gaps
		{"U1 : 1 - 5 : 7 ,  U2:1", "U1:1-5:7,U2:1"},              // whitespace around separators
		{"U1:007-010", "U1:7-10"},                                // leading zeros
		{"U1:1-9223372036854775806", "U1:1-9223372036854775806"}, // MaxGNO
		{"U1", ""},                 // uuid without intervals adds nothing
		{"U1:tag", ""},             // nor does a tag
		{"U1:t1:1-3", "U1:t1:1-3"}, // tagged only
		{"U1:tagb:1-2,U1:1-3,U1:TagA:5", "U1:1-3:taga:5:tagb:1-2"}, // untagged first, tags sorted, lower case
		{"U1:t:1:t:2", "U1:t:1-2"},
		{"U1:_x9:1", "U1:_x9:1"},
		{"U1:a:1:b:2,U2:3", "U1:a:1:b:2,U2:3"},
		{"U1:" + strings.Repeat("z", 32) + ":1", "U1:" + strings.Repeat("z", 32) + ":1"},
	} {
		in, want := expand(tc.in), expand(tc.want)
		s := mustParse(t, MySQL, in)
		if got := s.String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", in, got, want)
		}
		if s.IsEmpty() != (want == "") {
			t.Errorf("Parse(%q).IsEmpty() = %v", in, s.IsEmpty())
		}
		again := mustParse(t, MySQL, want)
		if !again.Equal(s) || again.String() != want {
			t.Errorf("Parse(%q) = %q, not Equal to Parse(%q)", want, again, in)
		}
		if s.Flavor() != MySQL {
			t.Errorf("Flavor() = %q", s.Flavor())
		}
	}
}

func TestParseMySQLErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"xyz:1", `uuid "xyz" is not 8-4-4-4-12 hex digits`},
		{"U1x:1", `unexpected "x:1" in the entry of uuid ` + u1},
		{strings.Replace(u1, "-", "", 1) + ":1", `is not 8-4-4-4-12 hex digits`},
		{"g" + u1[1:] + ":1", `uuid "g0000000-`},
		{"U1:0", `interval "0" starts at 0; transaction numbers start at 1`},
		{"U1:0-5", `interval "0-5" starts at 0`},
		{"U1:5-3", `interval "5-3" ends before it starts`},
		{"U1:1-", `interval "1-" has no end`},
		{"U1:1-x", `interval "1-x" has no end`},
		{"U1:9223372036854775807", `transaction number "9223372036854775807" is out of range [1, 9223372036854775806]`},
		{"U1:1-99999999999999999999", `transaction number "99999999999999999999" is out of range`},
		{"U1:1a", `unexpected "a" in the entry of uuid ` + u1},
		{"U1;1", `unexpected ";1" in the entry of uuid ` + u1},
		{"U1:", `want an interval or a tag after ':' in the entry of uuid ` + u1 + `, found ""`},
		{"U1:-1", `found "-1"`},
		{"U1:1,U2:", `in the entry of uuid ` + u2},
		{"U1:tag-x:1", `unexpected "-x:1"`},
		{"U1:" + strings.Repeat("a", 33) + ":1", `tag "` + strings.Repeat("a", 33) + `" is longer than 32 characters`},
		{"U1:1 2", `unexpected "2"`},
		{"+U1:1", `uuid "+` + u1 + `" is not`},
		{"0-1-5,1-1-7", `uuid "0-1-5" is not 8-4-4-4-12 hex digits (this looks like a MariaDB GTID; is the flavor set right?)`},
	} {
		in := expand(tc.in)
		_, err := Parse(MySQL, in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", in)
			continue
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) error %v does not wrap ErrSyntax", in, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "parsing mysql GTID set ") || !strings.Contains(msg, tc.want) {
			t.Errorf("Parse(%q) error\n  %s\nwant it to contain\n  %s", in, msg, tc.want)
		}
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := Parse(MySQL, u1+":5-3")
	want := `parsing mysql GTID set "` + u1 + `:5-3": invalid GTID syntax: interval "5-3" ends before it starts`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
	for _, long := range []string{
		u1 + ":1," + strings.Repeat("x", 10000),
		u1 + ":" + strings.Repeat("a", 10000) + ":1",
		u1 + ":" + strings.Repeat("0", 10000) + "5-3",
	} {
		_, err = Parse(MySQL, long)
		if err == nil || len(err.Error()) > 500 {
			t.Errorf("error for a long input is not bounded: %d bytes", len(err.Error()))
		}
	}
	_, err = Parse(MariaDB, strings.Repeat("0", 10000)+"1-1-1x")
	if err == nil || len(err.Error()) > 500 {
		t.Errorf("error for a long input is not bounded: %d bytes", len(err.Error()))
	}
	if _, err := Parse("postgres", ""); !errors.Is(err, ErrFlavor) {
		t.Errorf("Parse with unknown flavor: %v, want ErrFlavor", err)
	}
}

func TestAddMySQL(t *testing.T) {
	sid1, sid2 := mustUUID(t, u1), mustUUID(t, u2)
	type add struct {
		sid [16]byte
		tag string
		gno int64
	}
	for _, tc := range []struct {
		name string
		adds []add
		want string
	}{
		{"sequential", []add{{sid1, "", 1}, {sid1, "", 2}, {sid1, "", 3}}, "U1:1-3"},
		{"gap", []add{{sid1, "", 1}, {sid1, "", 3}}, "U1:1:3"},
		{"gap closed", []add{{sid1, "", 1}, {sid1, "", 3}, {sid1, "", 2}}, "U1:1-3"},
		{"reverse", []add{{sid1, "", 5}, {sid1, "", 4}, {sid1, "", 3}, {sid1, "", 1}, {sid1, "", 2}}, "U1:1-5"},
		{"before first", []add{{sid1, "", 10}, {sid1, "", 1}, {sid1, "", 5}}, "U1:1:5:10"},
		{"extend front", []add{{sid1, "", 10}, {sid1, "", 9}}, "U1:9-10"},
		{"extend middle", []add{{sid1, "", 1}, {sid1, "", 5}, {sid1, "", 9}, {sid1, "", 6}}, "U1:1:5-6:9"},
		{"duplicate", []add{{sid1, "", 3}, {sid1, "", 3}, {sid1, "", 1}, {sid1, "", 1}}, "U1:1:3"},
		{"interleaved uuids", []add{{sid2, "", 1}, {sid1, "", 1}, {sid2, "", 2}, {sid1, "", 2}}, "U1:1-2,U2:1-2"},
		{"tags", []add{{sid1, "b", 1}, {sid1, "", 7}, {sid1, "A", 2}, {sid1, "a", 3}}, "U1:7:a:2-3:b:1"},
		{"max", []add{{sid1, "", MaxGNO}, {sid1, "", MaxGNO - 1}}, "U1:9223372036854775805-9223372036854775806"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(MySQL)
			for _, a := range tc.adds {
				s.AddMySQL(a.sid, a.tag, a.gno)
				checkInvariants(t, s)
				if !s.ContainsMySQL(a.sid, a.tag, a.gno) {
					t.Fatalf("ContainsMySQL(%x, %q, %d) false right after adding it", a.sid, a.tag, a.gno)
				}
			}
			if got, want := s.String(), expand(tc.want); got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			if !s.Equal(mustParse(t, MySQL, expand(tc.want))) {
				t.Errorf("not Equal to the parsed canonical form")
			}
		})
	}
}

func TestAddText(t *testing.T) {
	s := New(MySQL)
	for _, g := range []string{"U1:5", " U1 : 6 ", strings.ToUpper(u1) + ":TAG:1", "U1:_t:9223372036854775806"} {
		if err := s.Add(expand(g)); err != nil {
			t.Fatalf("Add(%q): %v", g, err)
		}
	}
	if got, want := s.String(), expand("U1:5-6:_t:9223372036854775806:tag:1"); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"U1:1-5", `unexpected "-5" after the transaction number`},
		{"U1:0", `transaction number 0`},
		{"U1", `want uuid:number or uuid:tag:number`},
		{"U1:tag", `want a transaction number after tag "tag"`},
		{"U1:tag:", `want a transaction number, found ""`},
		{"U1:9223372036854775807", `out of range`},
		{"U1:1,U2:1", `unexpected ",U2:1"`},
		{"nope:1", `uuid "nope" is not`},
		{"0-1-2", `uuid "0-1-2" is not 8-4-4-4-12 hex digits (this looks like a MariaDB GTID; is the flavor set right?)`},
	} {
		in := expand(tc.in)
		err := s.Add(in)
		if !errors.Is(err, ErrSyntax) || !strings.HasPrefix(err.Error(), "parsing mysql GTID ") || !strings.Contains(err.Error(), expand(tc.want)) {
			t.Errorf("Add(%q) = %v, want ErrSyntax containing %q", in, err, expand(tc.want))
		}
	}
}

func TestContainsSubtractMySQL(t *testing.T) {
	// a contains b exactly when b \ a is empty, so the differences say it all.
	for _, tc := range []struct{ a, b, aMinusB, bMinusA string }{
		{a: "", b: ""},
		{a: "U1:1-10", b: "", aMinusB: "U1:1-10"},
		{a: "U1:1-10", b: "U1:2-5", aMinusB: "U1:1:6-10"},
		{a: "U1:1-10", b: "U1:1-10"},
		{a: "U1:1-10", b: "U1:2-5,U2:1", aMinusB: "U1:1:6-10", bMinusA: "U2:1"},
		{a: "U1:1-5", b: "U1:t:1", aMinusB: "U1:1-5", bMinusA: "U1:t:1"},
		{a: "U1:1-3:5-7", b: "U1:3-5", aMinusB: "U1:1-2:6-7", bMinusA: "U1:4"},
		{a: "U1:1-3:5-7", b: "U1:1-7", bMinusA: "U1:4"},
		{a: "U1:1-100", b: "U1:2:4:6-8:50-200", aMinusB: "U1:1:3:5:9-49", bMinusA: "U1:101-200"},
		{a: "U1:1-5:t:1-5,U2:1-5,U3:1", b: "U1:t:2,U3:1", aMinusB: "U1:1-5:t:1:3-5,U2:1-5"},
		{a: "U1:1-5,U3:1", b: "U2:1", aMinusB: "U1:1-5,U3:1", bMinusA: "U2:1"},
		{a: "U2:1", b: "U1:1,U3:1", aMinusB: "U2:1", bMinusA: "U1:1,U3:1"},
		{a: "U1:5-10", b: "U1:1-4:11-20", aMinusB: "U1:5-10", bMinusA: "U1:1-4:11-20"},
	} {
		a, b := mustParse(t, MySQL, expand(tc.a)), mustParse(t, MySQL, expand(tc.b))
		aStr, bStr := a.String(), b.String()
		if got, want := a.Contains(b), tc.bMinusA == ""; got != want {
			t.Errorf("%q.Contains(%q) = %v", tc.a, tc.b, got)
		}
		if got, want := b.Contains(a), tc.aMinusB == ""; got != want {
			t.Errorf("%q.Contains(%q) = %v", tc.b, tc.a, got)
		}
		if got, want := a.Equal(b), tc.aMinusB == "" && tc.bMinusA == ""; got != want {
			t.Errorf("%q.Equal(%q) = %v", tc.a, tc.b, got)
		}
		if !a.Contains(a) || !a.Contains(New(MySQL)) || !a.Subtract(a).IsEmpty() {
			t.Errorf("%q does not contain itself or the empty set", tc.a)
		}
		d := a.Subtract(b)
		checkInvariants(t, d)
		if got, want := d.String(), expand(tc.aMinusB); got != want {
			t.Errorf("%q.Subtract(%q) = %q, want %q", tc.a, tc.b, got, want)
		}
		d = b.Subtract(a)
		checkInvariants(t, d)
		if got, want := d.String(), expand(tc.bMinusA); got != want {
			t.Errorf("%q.Subtract(%q) = %q, want %q", tc.b, tc.a, got, want)
		}
		if a.String() != aStr || b.String() != bStr {
			t.Errorf("Contains/Subtract changed an operand: %q, %q", a, b)
		}
	}
}

func TestCloneMySQL(t *testing.T) {
	s := mustParse(t, MySQL, expand("U1:1-3:7,U2:1"))
	c := s.Clone()
	if !c.Equal(s) {
		t.Fatalf("Clone() = %q, want %q", c, s)
	}
	// Clone packs intervals into one array; growing the first entry must
	// not overwrite the second.
	c.AddMySQL(mustUUID(t, u1), "", 9)
	c.AddMySQL(mustUUID(t, u1), "", 11)
	checkInvariants(t, c)
	if got, want := c.String(), expand("U1:1-3:7:9:11,U2:1"); got != want {
		t.Errorf("clone after adds = %q, want %q", got, want)
	}
	if got, want := s.String(), expand("U1:1-3:7,U2:1"); got != want {
		t.Errorf("original after adding to the clone = %q, want %q", got, want)
	}
}

func TestContainsMySQLGTID(t *testing.T) {
	s := mustParse(t, MySQL, expand("U1:1-3:7:T:5"))
	sid := mustUUID(t, u1)
	for _, tc := range []struct {
		tag  string
		gno  int64
		want bool
	}{
		{"", 1, true}, {"", 3, true}, {"", 4, false}, {"", 7, true}, {"", 8, false},
		{"t", 5, true}, {"T", 5, true}, {"t", 1, false}, {"u", 5, false}, {"", 5, false},
	} {
		if got := s.ContainsMySQL(sid, tc.tag, tc.gno); got != tc.want {
			t.Errorf("ContainsMySQL(%q, %d) = %v", tc.tag, tc.gno, got)
		}
	}
	if s.ContainsMySQL(mustUUID(t, u2), "", 1) {
		t.Errorf("ContainsMySQL of an unknown uuid")
	}
}

func TestValidTag(t *testing.T) {
	for tag, want := range map[string]bool{
		"": false, "a": true, "_": true, "Z9_": true, "9a": false, "a-b": false, "a b": false,
		strings.Repeat("x", 32): true, strings.Repeat("x", 33): false, "é": false,
	} {
		if got := ValidTag(tag); got != want {
			t.Errorf("ValidTag(%q) = %v", tag, got)
		}
	}
}

func TestAppendMySQL(t *testing.T) {
	sid := mustUUID(t, strings.ToUpper(u2))
	for _, tc := range []struct {
		tag  string
		gno  int64
		want string
	}{
		{"", 1, u2 + ":1"},
		{"Tag_1", 42, u2 + ":tag_1:42"},
		{"", MaxGNO, u2 + ":9223372036854775806"},
	} {
		if got := string(AppendMySQL([]byte("x"), sid, tc.tag, tc.gno)); got != "x"+tc.want {
			t.Errorf("AppendMySQL = %q, want %q", got, "x"+tc.want)
		}
		if got := FormatMySQL(sid, tc.tag, tc.gno); got != tc.want {
			t.Errorf("FormatMySQL = %q, want %q", got, tc.want)
		}
		s := New(MySQL)
		if err := s.Add(tc.want); err != nil || !s.ContainsMySQL(sid, tc.tag, tc.gno) {
			t.Errorf("Add(FormatMySQL(...)) = %v, set %q", err, s)
		}
	}
}

func TestAddMySQLPanics(t *testing.T) {
	sid := mustUUID(t, u1)
	for name, f := range map[string]func(){
		"gno 0":         func() { New(MySQL).AddMySQL(sid, "", 0) },
		"gno too large": func() { New(MySQL).AddMySQL(sid, "", MaxGNO+1) },
		"bad tag":       func() { New(MySQL).AddMySQL(sid, "1x", 1) },
		"mariadb set":   func() { New(MariaDB).AddMySQL(sid, "", 1) },
		"unknown":       func() { New("oracle") },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			f()
		})
	}
}

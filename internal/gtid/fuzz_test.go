package gtid

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// checkRoundTrip is the property both parse fuzzers share: a parsed set
// prints a canonical string that parses back to an Equal set printing the
// same string, and the set operations agree with themselves.
func checkRoundTrip(t *testing.T, f Flavor, in string) {
	s, err := Parse(f, in)
	if err != nil {
		if !errors.Is(err, ErrSyntax) {
			t.Fatalf("Parse(%q) error %v does not wrap ErrSyntax", in, err)
		}
		return
	}
	checkInvariants(t, s)
	str := s.String()
	again, err := Parse(f, str)
	if err != nil {
		t.Fatalf("Parse(%q) = %q, which does not parse: %v", in, str, err)
	}
	if !again.Equal(s) || !s.Equal(again) {
		t.Fatalf("Parse(%q) = %q, which parses to a set that is not Equal", in, str)
	}
	if got := again.String(); got != str {
		t.Fatalf("Parse(%q) = %q, which prints as %q", in, str, got)
	}
	if c := s.Clone(); !c.Equal(s) || !s.Contains(c) || !s.Subtract(c).IsEmpty() {
		t.Fatalf("Clone/Contains/Subtract disagree on %q", str)
	}
	if s.IsEmpty() != (str == "") {
		t.Fatalf("IsEmpty() = %v for %q", s.IsEmpty(), str)
	}
}

func FuzzParseMySQL(f *testing.F) {
	for _, s := range []string{
		"", ",", u1 + ":1-5", u1 + ":1-3:5:7-9," + u2 + ":1",
		strings.ToUpper(u2) + ":1-5,\n" + u1 + ":3",
		u1 + ":1-5:tag_a:1-3:TAG_B:7", u1 + ":1-5," + u1 + ":3-9",
		u1 + " : 1 - 5 , " + u2 + ":tag:1", u1 + ":1-9223372036854775806",
		u1 + ":0", u1 + ":5-3", u1 + ":9223372036854775807", "0-1-2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { checkRoundTrip(t, MySQL, in) })
}

func FuzzParseMariaDB(f *testing.F) {
	for _, s := range []string{
		"", "0-1-42", "1-2-7,0-1-42", " 0 - 1 - 42 ,\n 3-3-3",
		"4294967295-4294967295-18446744073709551615", "0-1-1,0-2-2", "0-1-", u1 + ":1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) { checkRoundTrip(t, MariaDB, in) })
}

// The model for the MySQL fuzzers: four keys (two uuids, untagged and
// tagged, in canonical order) over transaction numbers 1..modelGNOs.
const modelGNOs = 300

var (
	modelUUIDs = [2]string{u1, u2}
	modelTags  = [2]string{"", "t"}
)

type model [4][modelGNOs + 1]bool

// modelOps turns fuzz bytes into (key, gno) operations, two bytes each.
func modelOps(data []byte, do func(key int, gno int64, viaText bool)) {
	for i := 0; i+1 < len(data); i += 2 {
		key := int(data[i] & 3)
		gno := 1 + (int64(data[i]>>2&1)<<8|int64(data[i+1]))%modelGNOs
		do(key, gno, data[i]&0x80 != 0)
	}
}

// String renders the model the slow, obvious way.
func (m *model) String() string {
	var parts []string
	for u := range modelUUIDs {
		var b strings.Builder
		for tg := range modelTags {
			bits := &m[2*u+tg]
			var runs []string
			for g := 1; g <= modelGNOs; g++ {
				if !bits[g] || bits[g-1] {
					continue
				}
				e := g
				for e < modelGNOs && bits[e+1] {
					e++
				}
				if e == g {
					runs = append(runs, fmt.Sprint(g))
				} else {
					runs = append(runs, fmt.Sprintf("%d-%d", g, e))
				}
			}
			if len(runs) == 0 {
				continue
			}
			if b.Len() == 0 {
				b.WriteString(modelUUIDs[u])
			}
			if modelTags[tg] != "" {
				b.WriteString(":" + modelTags[tg])
			}
			b.WriteString(":" + strings.Join(runs, ":"))
		}
		if b.Len() > 0 {
			parts = append(parts, b.String())
		}
	}
	return strings.Join(parts, ",")
}

// buildModel applies data to a new Set and to a model.
func buildModel(t *testing.T, data []byte) (*Set, *model) {
	sids := [2][16]byte{mustUUID(t, u1), mustUUID(t, u2)}
	s, m := New(MySQL), new(model)
	modelOps(data, func(key int, gno int64, viaText bool) {
		sid, tag := sids[key/2], modelTags[key%2]
		if viaText {
			if err := s.Add(FormatMySQL(sid, tag, gno)); err != nil {
				t.Fatal(err)
			}
		} else {
			s.AddMySQL(sid, tag, gno)
		}
		m[key][gno] = true
	})
	checkInvariants(t, s)
	return s, m
}

// FuzzAddMySQL adds transactions in the order the fuzzer picks and checks
// the set against a bitmap model: same canonical string, Equal to parsing
// it, and membership of every transaction.
func FuzzAddMySQL(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 0, 3})
	f.Add([]byte{0, 3, 0, 1, 0, 2, 1, 2, 3, 1})
	f.Add([]byte{0, 10, 0, 5, 0, 7, 0, 6, 0, 8, 0x80, 9, 2, 200, 6, 255, 4, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, m := buildModel(t, data)
		want := m.String()
		if got := s.String(); got != want {
			t.Fatalf("after adds: %q, want %q", got, want)
		}
		if p := mustParse(t, MySQL, want); !p.Equal(s) {
			t.Fatalf("Parse(%q) is not Equal to the added set", want)
		}
		sids := [2][16]byte{mustUUID(t, u1), mustUUID(t, u2)}
		for key := range m {
			for g := int64(1); g <= modelGNOs; g++ {
				if got := s.ContainsMySQL(sids[key/2], modelTags[key%2], g); got != m[key][g] {
					t.Fatalf("ContainsMySQL(key %d, %d) = %v in %q", key, g, got, want)
				}
			}
		}
	})
}

// FuzzSubtractMySQL checks Contains and Subtract against the model.
func FuzzSubtractMySQL(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 0, 3, 0, 9}, []byte{0, 2})
	f.Add([]byte{0, 5, 1, 5}, []byte{0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 1, 5})
	f.Fuzz(func(t *testing.T, da, db []byte) {
		a, ma := buildModel(t, da)
		b, mb := buildModel(t, db)
		var diff model
		aHasB := true
		for k := range ma {
			for g := range ma[k] {
				diff[k][g] = ma[k][g] && !mb[k][g]
				if mb[k][g] && !ma[k][g] {
					aHasB = false
				}
			}
		}
		d := a.Subtract(b)
		checkInvariants(t, d)
		if got, want := d.String(), diff.String(); got != want {
			t.Fatalf("%q.Subtract(%q) = %q, want %q", a, b, got, want)
		}
		if got := a.Contains(b); got != aHasB {
			t.Fatalf("%q.Contains(%q) = %v", a, b, got)
		}
		if got, want := a.Equal(b), ma.String() == mb.String(); got != want {
			t.Fatalf("%q.Equal(%q) = %v", a, b, got)
		}
	})
}

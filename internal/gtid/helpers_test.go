package gtid

import (
	"strings"
	"testing"
)

// Test uuids in byte order: u1 < u2 < u3.
const (
	u1 = "00000000-0000-0000-0000-000000000001"
	u2 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	u3 = "8a94f357-aab4-11df-86ab-c80aa9429562"
)

func mustUUID(t testing.TB, s string) [16]byte {
	t.Helper()
	sid, ok := parseUUID(s)
	if !ok {
		t.Fatalf("bad test uuid %q", s)
	}
	return sid
}

func mustParse(t testing.TB, f Flavor, s string) *Set {
	t.Helper()
	set, err := Parse(f, s)
	if err != nil {
		t.Fatalf("Parse(%s, %q): %v", f, s, err)
	}
	checkInvariants(t, set)
	return set
}

// checkInvariants fails t unless s is in the normal form every method
// relies on: entries sorted by key without duplicates or empties,
// intervals normal, tags valid and lower case.
func checkInvariants(t testing.TB, s *Set) {
	t.Helper()
	switch s.flavor {
	case MySQL:
		if len(s.ma) != 0 {
			t.Fatalf("mysql set has mariadb entries: %+v", s.ma)
		}
		for i, e := range s.my {
			if i > 0 && compareKey(s.my[i-1].sid, s.my[i-1].tag, e.sid, e.tag) >= 0 {
				t.Fatalf("entries %d and %d out of order in %q", i-1, i, s)
			}
			if e.tag != "" && (!ValidTag(e.tag) || e.tag != strings.ToLower(e.tag)) {
				t.Fatalf("entry %d has tag %q", i, e.tag)
			}
			if len(e.iv) == 0 {
				t.Fatalf("entry %d is empty", i)
			}
			for k, x := range e.iv {
				if x.start < 1 || x.end <= x.start || x.end-1 > MaxGNO {
					t.Fatalf("entry %d interval %d is %+v", i, k, x)
				}
				if k > 0 && e.iv[k-1].end >= x.start {
					t.Fatalf("entry %d intervals %d and %d overlap or touch: %+v", i, k-1, k, e.iv)
				}
			}
		}
	case MariaDB:
		if len(s.my) != 0 {
			t.Fatalf("mariadb set has mysql entries")
		}
		for i := 1; i < len(s.ma); i++ {
			if s.ma[i-1].domain >= s.ma[i].domain {
				t.Fatalf("domains %d and %d out of order: %+v", i-1, i, s.ma)
			}
		}
	default:
		t.Fatalf("flavor %q", s.flavor)
	}
}

// expand replaces the placeholders U1, U2, U3 by the test uuids.
func expand(s string) string {
	return strings.NewReplacer("U1", u1, "U2", u2, "U3", u3).Replace(s)
}

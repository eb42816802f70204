package gtid

import (
	"errors"
	"sync"
	"testing"
)

func TestParseFlavor(t *testing.T) {
	for in, want := range map[string]Flavor{"mysql": MySQL, " MariaDB ": MariaDB, "MYSQL": MySQL} {
		if got, err := ParseFlavor(in); err != nil || got != want {
			t.Errorf("ParseFlavor(%q) = %q, %v", in, got, err)
		}
	}
	_, err := ParseFlavor("percona")
	if want := `parsing GTID flavor "percona": unknown GTID flavor (want "mysql" or "mariadb")`; !errors.Is(err, ErrFlavor) || err.Error() != want {
		t.Errorf("ParseFlavor(percona) = %v", err)
	}
}

func TestMixedFlavors(t *testing.T) {
	my := mustParse(t, MySQL, u1+":1")
	ma := mustParse(t, MariaDB, "0-1-1")
	emptyMy, emptyMa := New(MySQL), New(MariaDB)
	if my.Equal(ma) || emptyMy.Equal(emptyMa) {
		t.Errorf("sets of different flavours are Equal")
	}
	if my.Contains(ma) || !my.Contains(emptyMa) {
		t.Errorf("Contains across flavours must hold only for an empty argument")
	}
	if d := my.Subtract(ma); !d.Equal(my) {
		t.Errorf("Subtract across flavours = %q, want %q", d, my)
	}
	if my.ContainsMariaDB(0, 1) || ma.ContainsMySQL(mustUUID(t, u1), "", 1) {
		t.Errorf("ContainsMySQL/ContainsMariaDB across flavours")
	}
	if err := ma.Add(u1 + ":1"); !errors.Is(err, ErrSyntax) {
		t.Errorf("adding a MySQL GTID to a MariaDB set: %v", err)
	}
	if err := my.Add("0-1-1"); !errors.Is(err, ErrSyntax) {
		t.Errorf("adding a MariaDB GTID to a MySQL set: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("AddMariaDB on a MySQL set did not panic")
		}
	}()
	my.AddMariaDB(0, 1, 1)
}

func TestZeroSetAdd(t *testing.T) {
	var s Set
	if err := s.Add("0-1-1"); !errors.Is(err, ErrFlavor) {
		t.Errorf("Add on a zero Set = %v, want ErrFlavor", err)
	}
}

// TestConcurrentReads backs the promise that reads do not write (the Add
// hint included), so -race would flag a read that does.
func TestConcurrentReads(t *testing.T) {
	my := mustParse(t, MySQL, expand("U1:1-5:7,U2:t:1"))
	ma := mustParse(t, MariaDB, "0-1-5,1-1-7")
	other := mustParse(t, MySQL, expand("U1:2"))
	sid := mustUUID(t, u1)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_ = my.String() + ma.String()
				_ = my.Contains(other) && my.Equal(other) && ma.ContainsMariaDB(0, 1)
				_ = my.ContainsMySQL(sid, "", 3)
				_ = my.Subtract(other).Clone().IsEmpty()
			}
		})
	}
	wg.Wait()
}

package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

type txn struct {
	gtid string
	at   int // minutes after t0
}

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

const (
	u1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	u2 = "4f22fa47-71ca-11e1-9e33-c80aa9429562"
)

func TestReplayBounds(t *testing.T) {
	for _, tc := range []struct {
		name               string
		flavor             gtid.Flavor
		from, to, executed string
		fromTime, toTime   int // minutes after t0; -1 = none
		txns               []txn
		want               string // one letter per transaction handled: i(nclude) s(kip) S(top), then "." when over
		reason             reason
	}{
		{"mariadb middle range", gtid.MariaDB, "0-1-5", "0-1-8", "0-1-10", -1, -1,
			[]txn{{"0-1-6", 0}, {"0-1-7", 0}, {"0-1-8", 0}, {"0-1-9", 0}}, "iii.", reachedTo},
		{"mariadb to the executed set", gtid.MariaDB, "0-1-5", "", "0-1-7", -1, -1,
			[]txn{{"0-1-6", 0}, {"0-1-7", 0}, {"0-1-8", 0}}, "ii.", reachedExecuted},
		{"mariadb two domains", gtid.MariaDB, "0-1-5", "0-1-7,1-1-3", "0-1-9,1-1-4", -1, -1,
			[]txn{{"1-1-1", 0}, {"0-1-6", 0}, {"1-1-2", 0}, {"0-1-7", 0}, {"0-1-8", 0}, {"1-1-3", 0}, {"1-1-4", 0}}, "iiiisi.", reachedTo},
		{"mariadb domain not in to is outside", gtid.MariaDB, "", "0-1-2", "0-1-2,1-1-1", -1, -1,
			[]txn{{"1-1-1", 0}, {"0-1-1", 0}, {"0-1-2", 0}}, "sii.", reachedTo},
		{"mariadb server id ignored", gtid.MariaDB, "0-1-5", "0-2-7", "0-2-9", -1, -1,
			[]txn{{"0-1-6", 0}, {"0-2-7", 0}}, "ii.", reachedTo},
		{"to-time stops before the later transaction", gtid.MariaDB, "0-1-5", "", "0-1-9", -1, 30,
			[]txn{{"0-1-6", 10}, {"0-1-7", 30}, {"0-1-8", 31}, {"0-1-9", 0}}, "iiS", reachedToTime},
		{"to-time bounded by the executed set", gtid.MariaDB, "0-1-5", "", "0-1-6", -1, 30,
			[]txn{{"0-1-6", 10}, {"0-1-7", 20}}, "i.", reachedExecuted},
		{"from-time skips up to the first at or after it", gtid.MariaDB, "", "", "0-1-5", 20, -1,
			[]txn{{"0-1-1", 0}, {"0-1-2", 19}, {"0-1-3", 20}, {"0-1-4", 5}, {"0-1-5", 40}}, "ssiii.", reachedExecuted},
		{"mysql gaps of other uuids are skipped", gtid.MySQL, u1 + ":1-5", u1 + ":1-8", u1 + ":1-10," + u2 + ":1-3", -1, -1,
			[]txn{{u2 + ":1", 0}, {u1 + ":6", 0}, {u2 + ":2", 0}, {u1 + ":7", 0}, {u1 + ":8", 0}, {u1 + ":9", 0}}, "sisii.", reachedTo},
		{"mysql executed", gtid.MySQL, u1 + ":1-5", "", u1 + ":1-6," + u2 + ":1", -1, -1,
			[]txn{{u2 + ":1", 0}, {u1 + ":6", 0}}, "ii.", reachedExecuted},
		{"anonymous transaction skipped", gtid.MySQL, "", "", u1 + ":1", -1, -1,
			[]txn{{"", 0}, {u1 + ":1", 0}}, "si.", reachedExecuted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := newBounds(parse(t, tc.flavor, tc.from), parseOpt(t, tc.flavor, tc.to),
				minutes(tc.fromTime), minutes(tc.toTime), parse(t, tc.flavor, tc.executed))
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, x := range tc.txns {
				v, err := b.enter(x.gtid, t0.Add(time.Duration(x.at)*time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				got.WriteByte("siS"[v])
				if v == stop {
					break
				}
				over, err := b.leave(x.gtid)
				if err != nil {
					t.Fatal(err)
				}
				if over {
					got.WriteByte('.')
					break
				}
			}
			if got.String() != tc.want {
				t.Errorf("verdicts %q, want %q", got.String(), tc.want)
			}
			if b.reason() != tc.reason {
				t.Errorf("reason %q, want %q", b.reason(), tc.reason)
			}
		})
	}
}

func TestReplayBoundsRefused(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		flavor                   gtid.Flavor
		from, to, executed, want string
	}{
		{"beyond the executed seq", gtid.MariaDB, "0-1-1", "0-1-20", "0-1-10", `it has not executed 0-1-20`},
		{"domain the server lacks", gtid.MariaDB, "", "0-1-2,3-1-1", "0-1-10", `it has not executed 3-1-1`},
		{"mysql beyond", gtid.MySQL, "", u1 + ":1-12", u1 + ":1-10", `it has not executed ` + u1 + `:11-12`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newBounds(parse(t, tc.flavor, tc.from), parseOpt(t, tc.flavor, tc.to), time.Time{}, time.Time{}, parse(t, tc.flavor, tc.executed))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	_, err := newBounds(gtid.New(gtid.MySQL), nil, time.Time{}, time.Time{}, gtid.New(gtid.MariaDB))
	if err == nil || !strings.Contains(err.Error(), "the server is mariadb") {
		t.Fatalf("flavour mismatch: %v", err)
	}
}

func TestReplayBoundsNothingToDo(t *testing.T) {
	b, err := newBounds(parse(t, gtid.MariaDB, "0-1-9"), parse(t, gtid.MariaDB, "0-1-7"), time.Time{}, time.Time{}, parse(t, gtid.MariaDB, "0-1-9"))
	if err != nil {
		t.Fatal(err)
	}
	if !b.over() {
		t.Fatal("a range ending before its start is over at once")
	}
}

func parse(t *testing.T, f gtid.Flavor, s string) *gtid.Set {
	t.Helper()
	set, err := gtid.Parse(f, s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func parseOpt(t *testing.T, f gtid.Flavor, s string) *gtid.Set {
	if s == "" {
		return nil
	}
	return parse(t, f, s)
}

func minutes(m int) time.Time {
	if m < 0 {
		return time.Time{}
	}
	return t0.Add(time.Duration(m) * time.Minute)
}

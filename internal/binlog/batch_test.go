package binlog

import (
	"strings"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/internal/gtid"
)

// A Txn built by NewTxn moves a GTID set as the Reader's Txn does.
func TestNewTxnAddTo(t *testing.T) {
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	for _, tc := range []struct {
		flavor   gtid.Flavor
		from, id string
		want     string // the set after AddTo
		wantGTID string // Txn.GTID
	}{
		{gtid.MariaDB, "0-1-5", "0-1-6", "0-1-6", "0-1-6"},
		{gtid.MariaDB, "0-1-5", "1-2-3", "0-1-5,1-2-3", "1-2-3"},
		{gtid.MySQL, uuid + ":1-5", uuid + ":6", uuid + ":1-6", uuid + ":6"},
		{gtid.MySQL, uuid + ":1-5", strings.ToUpper(uuid) + ":Tag:1", uuid + ":1-5:tag:1", uuid + ":tag:1"},
		{gtid.MySQL, uuid + ":1-5", "", uuid + ":1-5", ""},
	} {
		set, err := gtid.Parse(tc.flavor, tc.from)
		if err != nil {
			t.Fatal(err)
		}
		txn, err := NewTxn(tc.flavor, tc.id, time.Unix(1, 0))
		if err != nil {
			t.Fatalf("NewTxn(%s, %q): %v", tc.flavor, tc.id, err)
		}
		txn.AddTo(set)
		if set.String() != tc.want || txn.GTID != tc.wantGTID {
			t.Errorf("NewTxn(%s, %q): GTID %q, set after AddTo %q; want %q, %q", tc.flavor, tc.id, txn.GTID, set, tc.wantGTID, tc.want)
		}
	}
	for _, bad := range []struct {
		flavor gtid.Flavor
		id     string
	}{{gtid.MariaDB, "0-1"}, {gtid.MySQL, "0-1-5"}, {"", "0-1-5"}} {
		if _, err := NewTxn(bad.flavor, bad.id, time.Time{}); err == nil {
			t.Errorf("NewTxn(%q, %q) accepted", bad.flavor, bad.id)
		}
	}
}

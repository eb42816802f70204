package replay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/contract"
	"github.com/binlog-router/binlog-router/internal/route"
)

// TestReplayLoopChecksContracts: replay builds records with the router's
// contracts; a payload that violates its contract stops the replay at
// its row, and nothing of its transaction is committed.
func TestReplayLoopChecksContracts(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "E.json"), []byte(`{"type":"object","required":["n"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := contract.Load(dir, contract.MissingAllow)
	if err != nil {
		t.Fatal(err)
	}
	p := newTestPass(t, "", t0.AddDate(1, 0, 0), 100, 100)
	p.cfg.Route.Contracts = set
	t1 := &binlog.Txn{GTID: "0-1-1", Time: t0}
	t2 := &binlog.Txn{GTID: "0-1-2", Time: t0}
	good := func(txn *binlog.Txn, n int) binlog.OutboxRow {
		r := row(txn, n)
		r.Payload = []byte(fmt.Sprintf(`{"n":%d}`, n))
		return r
	}
	bad := row(t2, 3) // {} has no n
	err = p.run(t, queue(good(t1, 1), t1, good(t2, 2), bad, t2))
	if !errors.Is(err, route.ErrContractViolation) {
		t.Fatalf("err %v, want a contract violation", err)
	}
	for _, s := range []string{"gtid=0-1-2", "event_id=" + id(3), "E.json", `keyword "required"`, "--contracts-dir"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not name %s", err, s)
		}
	}
	if slices.Contains(p.out.committed, id(2)) || slices.Contains(p.out.committed, id(3)) {
		t.Errorf("committed %v: nothing of the transaction of the violating row may be", p.out.committed)
	}
	if !slices.Contains(p.out.produced, id(1)) {
		t.Errorf("produced %v: the valid row before is produced", p.out.produced)
	}
}

package validate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/contract"
)

func TestContractsChecks(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"order_created.json", "order_paid.v2.json"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte(`{}`), 0o644))
	}
	load := func(p contract.MissingPolicy) *contract.Set {
		s, err := contract.Load(dir, p)
		require.NoError(t, err)
		return s
	}
	allow, failing := load(contract.MissingAllow), load(contract.MissingFail)

	c := contractsLoaded(allow)
	assert.Equal(t, OK, c.Status)
	assert.Equal(t, "2 compiled from "+dir+" (--contracts-missing=allow): order_created.json, order_paid.v2.json", c.Detail)

	c = contractsCoverage(allow, "shop.outbox", []string{"order_created", "order_paid"}, false)
	assert.Equal(t, OK, c.Status, c.String())
	assert.Equal(t, "each of the 2 event types of its last 10000 rows has a contract", c.Detail)

	seen := []string{"order_created", "order_shipped", "refund"}
	c = contractsCoverage(allow, "shop.outbox", seen, false)
	assert.Equal(t, Warn, c.Status)
	assert.Equal(t, "event types of its last 10000 rows without a contract in "+dir+": order_shipped, refund", c.Detail)
	assert.Contains(t, c.Fix, "routed unchecked")

	c = contractsCoverage(failing, "shop.outbox", seen, true)
	assert.Equal(t, Warn, c.Status)
	assert.Contains(t, c.Fix, "dead-letter topic")

	c = contractsCoverage(failing, "shop.outbox", seen, false)
	assert.Equal(t, Fail, c.Status)
	assert.Equal(t, "contracts of shop.outbox", c.Name)
	assert.Contains(t, c.Fix, "--contracts-missing=allow")
}

package route

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/contract"
)

// testContracts loads testdata/contracts: OrderCreated.json.
func testContracts(t testing.TB, missing contract.MissingPolicy) *contract.Set {
	t.Helper()
	s, err := contract.Load(filepath.Join("testdata", "contracts"), missing)
	require.NoError(t, err)
	return s
}

func TestRouteChecksContracts(t *testing.T) {
	r := newRouter(t, func(c *Config) { c.Contracts = testContracts(t, contract.MissingAllow) })
	row := benchRow()
	rec, err := r.Route(row, testTxn())
	require.NoError(t, err, "a payload that satisfies its contract routes")
	assert.Equal(t, row.Payload, rec.Value)

	row.Payload = []byte(`{"orderId":"o-1","customer":{"id":7,"name":"Ada"},"items":[{"sku":"A","qty":0,"price":1}],"total":1}`)
	_, err = r.Route(row, testTxn())
	var re *RowError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, KindContractViolation, re.Kind)
	assert.True(t, errors.Is(err, ErrContractViolation))
	assert.Equal(t, "outbox row shop.outbox event_id="+testEventID+" gtid=0-1-42: payload violates contract "+
		filepath.Join("testdata", "contracts", "OrderCreated.json")+` at instance path "/items/0/qty", keyword "minimum": `+
		"minimum: got 0, want 1", err.Error())

	row.Payload = nil
	_, err = r.Route(row, testTxn())
	assert.NoError(t, err, "a NULL payload is a tombstone, not checked")

	row.EventType = []byte("OrderPaid")
	row.Payload = []byte(`"anything"`)
	_, err = r.Route(row, testTxn())
	assert.NoError(t, err, "--contracts-missing=allow routes an event type without a contract")

	row.Payload = []byte(`not json`)
	_, err = r.Route(row, testTxn())
	require.ErrorAs(t, err, &re)
	assert.Equal(t, KindInvalidPayloadJSON, re.Kind, "JSON validity is checked before the contract")
}

func TestRouteContractMissing(t *testing.T) {
	r := newRouter(t, func(c *Config) { c.Contracts = testContracts(t, contract.MissingFail) })
	row := benchRow()
	row.EventType = []byte("OrderPaid")
	_, err := r.Route(row, testTxn())
	var re *RowError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, KindContractMissing, re.Kind)
	assert.True(t, errors.Is(err, ErrContractMissing))
	assert.Contains(t, err.Error(), `gtid=0-1-42: no contract for event_type "OrderPaid"`)
	assert.Contains(t, err.Error(), `add "OrderPaid.json" or "OrderPaid.v3.json", or run with --contracts-missing=allow`)
}

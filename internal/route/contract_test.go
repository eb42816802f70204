package route

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/contract"
	"github.com/binlog-router/binlog-router/internal/jsonscan"
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

// TestRouteContractIsTheJSONCheck: with --validate-json, a row that has a
// contract is read once, by the contract's decoding, and still gets the
// invalid-JSON error rather than a violation; without it, bytes that are
// not UTF-8 reach the contract as U+FFFD.
func TestRouteContractIsTheJSONCheck(t *testing.T) {
	latin1 := []byte("{\"orderId\":\"caf\xe9\",\"customer\":{\"id\":7,\"name\":\"A\"},\"items\":[{\"sku\":\"A\",\"qty\":1,\"price\":1}],\"total\":1}")
	for _, validate := range []bool{true, false} {
		r := newRouter(t, func(c *Config) {
			c.Contracts = testContracts(t, contract.MissingFail)
			c.ValidateJSON = validate
		})
		row := benchRow()
		for _, p := range [][]byte{[]byte(`{"orderId":`), []byte(`{} {}`), []byte(""), latin1} {
			row.Payload = p
			_, err := r.Route(row, testTxn())
			var re *RowError
			if !validate && string(p) == string(latin1) {
				assert.NoError(t, err, "validate=false: %q", p)
				continue
			}
			require.ErrorAs(t, err, &re, "validate=%v: %q", validate, p)
			if validate {
				assert.Equal(t, KindInvalidPayloadJSON, re.Kind, "%q", p)
				assert.Contains(t, err.Error(), "is not valid JSON in UTF-8; write JSON or NULL, or run with --validate-json=false")
			} else {
				assert.Equal(t, KindContractViolation, re.Kind, "%q", p)
				assert.Contains(t, err.Error(), `keyword "json": payload is not JSON`)
			}
		}
	}
}

// FuzzCheckStrictIsValidJSON: Contract.CheckStrict refuses as not JSON
// exactly the payloads jsonscan.Valid refuses, so that the router may skip
// jsonscan.Valid for rows with a contract.
func FuzzCheckStrictIsValidJSON(f *testing.F) {
	for _, seed := range []string{``, ` `, `{}`, `[]]`, `{"a":1,}`, `{"a" 1}`, `"\u12"`, `"\ud800"`, `-01`, `1e`, `[1,2.5e-3,true,null]`, "\"\x1f\"", "{\"a\":\"\xc3\xa9\"}"} {
		f.Add([]byte(seed))
	}
	f.Add(benchPayload(500))
	f.Add([]byte("\"caf\xe9\""))
	k := testContracts(f, contract.MissingFail).Lookup([]byte("OrderCreated"), nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		notJSON := errors.Is(k.CheckStrict(b), contract.ErrNotJSON)
		if valid := jsonscan.Valid(b); valid == notJSON {
			t.Fatalf("jsonscan.Valid(%q) = %v, CheckStrict not JSON = %v", b, valid, notJSON)
		}
	})
}

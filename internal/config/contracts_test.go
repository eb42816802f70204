package config

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContractsReachRouterAndReplay: Validate compiles --contracts-dir
// and refuses a broken contract naming its file; the router's and
// replay's route configurations carry the compiled contracts.
func TestContractsReachRouterAndReplay(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "order_created.json"), []byte(`{"type":"object"}`), 0o644))

	c := validRun()
	assert.Equal(t, "allow", c.ContractsMissing, "the default")
	require.NoError(t, c.Validate())
	assert.Nil(t, c.RouteConfig().Contracts, "no --contracts-dir, no contracts")

	c.ContractsDir = dir
	require.NoError(t, c.Validate())
	require.NotNil(t, c.Contracts())
	assert.Same(t, c.Contracts(), c.RouteConfig().Contracts)
	assert.Same(t, c.Contracts(), c.RelayConfig(zerolog.Nop(), "", nil).Route.Contracts)
	assert.Same(t, c.Contracts(), c.ReplayConfig(zerolog.Nop(), io.Discard).Route.Contracts)
	assert.Same(t, c.Contracts(), c.ValidateConfig().Contracts)

	c.ContractsMissing = "deny"
	assert.EqualError(t, c.Validate(), `--contracts-missing "deny": use allow or fail`)

	broken := filepath.Join(dir, "order_paid.v2.json")
	require.NoError(t, os.WriteFile(broken, []byte(`{"$ref":"money.json"}`), 0o644))
	c.ContractsMissing = "fail"
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--contracts-dir: contract "+broken+" does not compile")
	assert.Nil(t, c.Contracts())
}

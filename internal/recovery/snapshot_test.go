package recovery

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLogStatus(t *testing.T) {
	file, pos, set, err := parseLogStatus(`{"gtid_executed": "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,\n4e11fa47-71ca-11e1-9e33-c80aa9429562:1-9", "binary_log_file": "binlog.000003", "binary_log_position": 1561}`)
	require.NoError(t, err)
	assert.Equal(t, "binlog.000003", file)
	assert.Equal(t, uint64(1561), pos)
	assert.Equal(t, "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,4e11fa47-71ca-11e1-9e33-c80aa9429562:1-9", set)

	_, _, set, err = parseLogStatus(`{"gtid_executed": "", "binary_log_file": "binlog.000001", "binary_log_position": 157}`)
	require.NoError(t, err)
	assert.Equal(t, "", set, "a server with no transaction yet")

	_, _, _, err = parseLogStatus(`{"binary_log_file": "binlog.000001", "binary_log_position": 157}`)
	assert.ErrorContains(t, err, "gtid_mode")
	_, _, _, err = parseLogStatus(`not json`)
	assert.Error(t, err)
}

package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidateCheckString(t *testing.T) {
	tests := []struct {
		c    Check
		want string
	}{
		{ok("log_bin", "ON"), "OK   log_bin: ON"},
		{Check{Name: "x", Status: OK, Detail: "d", Fix: "ignored"}, "OK   x: d"},
		{warn("binlog_row_metadata", "SET GLOBAL binlog_row_metadata = 'FULL'", "MINIMAL"),
			"WARN binlog_row_metadata: MINIMAL — fix: SET GLOBAL binlog_row_metadata = 'FULL'"},
		{fail("binlog_format", "set ROW", "%s is not ROW", "MIXED"), "FAIL binlog_format: MIXED is not ROW — fix: set ROW"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.c.String())
	}
	checks := []Check{tests[0].c, tests[2].c, tests[3].c}
	assert.Equal(t, "3 checks: 1 OK, 1 WARN, 1 FAIL", Summary(checks))
}

// TestValidateWorst: the cause of the failed checks that run would stop
// with first; warnings and OKs have none.
func TestValidateWorst(t *testing.T) {
	okc, warnc := ok("a", "fine"), warn("b", "fix", "meh")
	failc := fail("c", "fix", "broken")
	config := because(CauseConfig, fail("d", "fix", "misconfigured"))
	purged := because(CausePurged, fail("e", "fix", "gone"))
	for _, tt := range []struct {
		name   string
		checks []Check
		cause  Cause
		failed bool
	}{
		{"none", nil, CauseError, false},
		{"no failure", []Check{okc, warnc, because(CauseConfig, warnc)}, CauseError, false},
		{"error", []Check{okc, failc}, CauseError, true},
		{"purged over error", []Check{failc, purged, failc}, CausePurged, true},
		{"configuration over all", []Check{purged, config, failc}, CauseConfig, true},
	} {
		cause, failed := Worst(tt.checks)
		assert.Equal(t, tt.failed, failed, tt.name)
		assert.Equal(t, tt.cause, cause, tt.name)
	}
	assert.Equal(t, CauseError, because(CauseConfig, warnc).Cause, "only a Fail has a cause")
}

func TestValidateParseVersion(t *testing.T) {
	tests := []struct {
		in   string
		want version
	}{
		{"10.11.19-MariaDB-0+deb12u1-log", version{10, 11, 19}},
		{"5.5.5-10.6.1-MariaDB", version{10, 6, 1}},
		{"8.0.36", version{8, 0, 36}},
		{"8.4.0-log", version{8, 4, 0}},
		{"11.4", version{11, 4, 0}},
		{"garbage", version{}},
		{"", version{}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, parseVersion(tt.in), tt.in)
	}
	v := version{10, 5, 2}
	assert.True(t, v.atLeast(10, 5, 2))
	assert.True(t, v.atLeast(10, 4, 99))
	assert.False(t, v.atLeast(10, 5, 3))
	assert.False(t, v.atLeast(11, 0, 0))
}

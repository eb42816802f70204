package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

func mariadbServer(t testing.TB) *binlog.Server {
	t.Helper()
	executed, err := gtid.Parse(gtid.MariaDB, "0-1-42")
	require.NoError(t, err)
	return &binlog.Server{Version: "10.11.19-MariaDB", Flavor: gtid.MariaDB, ServerID: 1, LogBin: true,
		Format: "ROW", RowImage: "FULL", RowMetadata: "FULL", GTIDMode: "ON",
		Executed: executed, Purged: gtid.New(gtid.MariaDB)}
}

func mysqlServer(t testing.TB) *binlog.Server {
	t.Helper()
	executed, err := gtid.Parse(gtid.MySQL, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100")
	require.NoError(t, err)
	purged, err := gtid.Parse(gtid.MySQL, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10")
	require.NoError(t, err)
	return &binlog.Server{Version: "8.0.36", Flavor: gtid.MySQL, ServerID: 7, LogBin: true,
		Format: "ROW", RowImage: "FULL", RowMetadata: "FULL", GTIDMode: "ON", Executed: executed, Purged: purged}
}

func TestValidateServerSettings(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(s *binlog.Server, vars map[string]string)
		check  func(s *binlog.Server, vars map[string]string) Check
		mysql  bool
		status Status
		want   []string // substrings of the line
	}{
		{name: "mariadb server", check: func(s *binlog.Server, _ map[string]string) Check {
			return checkServer(s, parseVersion(s.Version), "db:3306", "root@%", 1001)
		}, status: OK, want: []string{"MariaDB 10.11.19-MariaDB at db:3306 as root@%, server_id 1"}},
		{name: "router id clashes", check: func(s *binlog.Server, _ map[string]string) Check {
			return checkServer(s, parseVersion(s.Version), "db:3306", "root@%", 1)
		}, status: Fail, want: []string{"--server-id 1 is the server's own", "fix: set --server-id"}},
		{name: "server id 0", edit: func(s *binlog.Server, _ map[string]string) { s.ServerID = 0 },
			check: func(s *binlog.Server, _ map[string]string) Check {
				return checkServer(s, parseVersion(s.Version), "db:3306", "root@%", 1001)
			}, status: Fail, want: []string{"server_id is 0"}},
		{name: "old mysql", mysql: true, edit: func(s *binlog.Server, _ map[string]string) { s.Version = "5.5.62" },
			check: func(s *binlog.Server, _ map[string]string) Check {
				return checkServer(s, parseVersion(s.Version), "db:3306", "root@%", 1001)
			}, status: Fail, want: []string{"no GTIDs", "upgrade to MySQL 5.7"}},
		{name: "log_bin off", edit: func(s *binlog.Server, _ map[string]string) { s.LogBin = false },
			check:  func(s *binlog.Server, _ map[string]string) Check { return checkLogBin(s) },
			status: Fail, want: []string{"OFF", "fix: start the server with log_bin"}},
		{name: "mixed format", edit: func(s *binlog.Server, _ map[string]string) { s.Format = "MIXED" },
			check:  func(s *binlog.Server, _ map[string]string) Check { return checkFormat(s) },
			status: Fail, want: []string{"FAIL binlog_format: MIXED", "SET GLOBAL binlog_format = 'ROW'", "my.cnf"}},
		{name: "noblob image", edit: func(s *binlog.Server, _ map[string]string) { s.RowImage = "NOBLOB" },
			check:  func(s *binlog.Server, _ map[string]string) Check { return checkRowImage(s) },
			status: Fail, want: []string{"NOBLOB", "SET GLOBAL binlog_row_image = 'FULL'"}},
		{name: "row metadata full", check: func(s *binlog.Server, _ map[string]string) Check { return checkRowMetadata(s, version{10, 11, 0}) },
			status: OK, want: []string{"FULL"}},
		{name: "row metadata minimal", edit: func(s *binlog.Server, _ map[string]string) { s.RowMetadata = "MINIMAL" },
			check:  func(s *binlog.Server, _ map[string]string) Check { return checkRowMetadata(s, version{10, 11, 0}) },
			status: Warn, want: []string{"MINIMAL: TABLE_MAP events carry no column names", "information_schema", "SET GLOBAL binlog_row_metadata = 'FULL'"}},
		{name: "row metadata unsupported", edit: func(s *binlog.Server, _ map[string]string) { s.RowMetadata = ""; s.Version = "10.4.30-MariaDB" },
			check:  func(s *binlog.Server, _ map[string]string) Check { return checkRowMetadata(s, version{10, 4, 30}) },
			status: Warn, want: []string{"not supported by 10.4.30-MariaDB", "upgrade to MariaDB 10.5"}},
		{name: "mariadb strict", edit: func(_ *binlog.Server, v map[string]string) { v[varStrictMode] = "1" },
			check:  checkGTID,
			status: OK, want: []string{"always on", "gtid_strict_mode ON", "[0-1-42]"}},
		{name: "mariadb not strict", edit: func(_ *binlog.Server, v map[string]string) { v[varStrictMode] = "0" },
			check:  checkGTID,
			status: Warn, want: []string{"gtid_strict_mode is OFF", "SET GLOBAL gtid_strict_mode = ON"}},
		{name: "mysql gtid on", mysql: true, edit: func(_ *binlog.Server, v map[string]string) { v[varEnforceGTID] = "ON" },
			check:  checkGTID,
			status: OK, want: []string{"gtid_mode=ON, enforce_gtid_consistency=ON, gtid_executed [3e11fa47-71ca-11e1-9e33-c80aa9429562:1-100]"}},
		{name: "mysql gtid off", mysql: true, edit: func(s *binlog.Server, v map[string]string) { s.GTIDMode = "OFF"; v[varEnforceGTID] = "OFF" },
			check:  checkGTID,
			status: Fail, want: []string{"gtid_mode=OFF, enforce_gtid_consistency=OFF", "OFF_PERMISSIVE, ON_PERMISSIVE, ON"}},
		{name: "mysql enforce warn", mysql: true, edit: func(_ *binlog.Server, v map[string]string) { v[varEnforceGTID] = "WARN" },
			check:  checkGTID,
			status: Fail, want: []string{"enforce_gtid_consistency=WARN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mariadbServer(t)
			if tt.mysql {
				s = mysqlServer(t)
			}
			vars := map[string]string{}
			if tt.edit != nil {
				tt.edit(s, vars)
			}
			c := tt.check(s, vars)
			assert.Equal(t, tt.status, c.Status, c.String())
			for _, w := range tt.want {
				assert.Contains(t, c.String(), w)
			}
			if c.Status != OK {
				assert.NotEmpty(t, c.Fix, "every WARN and FAIL has a fix")
			}
		})
	}
}

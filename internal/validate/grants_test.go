package validate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

func TestValidateParseGrant(t *testing.T) {
	tests := []struct {
		line string
		want grant
		ok   bool
	}{
		{"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA mysql_native_password USING 'invalid' WITH GRANT OPTION",
			grant{privs: []string{"ALL PRIVILEGES"}, db: "*", table: "*"}, true},
		{"GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '*8E8A2D0A0D2B5C1E'",
			grant{privs: []string{"USAGE"}, db: "*", table: "*"}, true},
		{"GRANT SELECT ON `shop`.* TO `app`@`%`", grant{privs: []string{"SELECT"}, db: "shop", table: "*"}, true},
		{"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `repl`@`%`",
			grant{privs: []string{"REPLICATION SLAVE", "BINLOG MONITOR"}, db: "*", table: "*"}, true},
		{"GRANT SELECT, INSERT ON `shop`.`outbox` TO 'app'@'10.0.0.%'",
			grant{privs: []string{"SELECT", "INSERT"}, db: "shop", table: "outbox"}, true},
		{"GRANT SELECT (`event_id`, `payload`), INSERT ON `shop`.`outbox` TO `app`@`%`",
			grant{privs: []string{"SELECT", "INSERT"}, db: "shop", table: "outbox"}, true},
		{"GRANT SELECT ON `my.app`.`out``box` TO `app`@`%`", grant{privs: []string{"SELECT"}, db: "my.app", table: "out`box"}, true},
		{"GRANT SELECT ON TABLE `shop`.`outbox` TO `app`@`%`", grant{privs: []string{"SELECT"}, db: "shop", table: "outbox"}, true},
		{"GRANT SELECT ON `shop\\_v2`.* TO `app`@`%`", grant{privs: []string{"SELECT"}, db: `shop\_v2`, table: "*"}, true},
		// MySQL 8: static privileges, dynamic privileges, roles, partial revokes.
		{"GRANT SELECT, RELOAD, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `router`@`%`",
			grant{privs: []string{"SELECT", "RELOAD", "REPLICATION SLAVE", "REPLICATION CLIENT"}, db: "*", table: "*"}, true},
		{"GRANT BACKUP_ADMIN,REPLICATION_SLAVE_ADMIN ON *.* TO `root`@`localhost`",
			grant{privs: []string{"BACKUP_ADMIN", "REPLICATION_SLAVE_ADMIN"}, db: "*", table: "*"}, true},
		{"GRANT `reader`@`%`,`repl` TO `app`@`%`", grant{role: true}, true},
		{"REVOKE SELECT ON `secret`.* FROM `app`@`%`", grant{revoke: true, privs: []string{"SELECT"}, db: "secret", table: "*"}, true},
		// Nothing this package looks at.
		{"GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION", grant{}, false},
		{"GRANT EXECUTE ON PROCEDURE `shop`.`p` TO `app`@`%`", grant{}, false},
		{"GRANT EXECUTE ON FUNCTION `shop`.`f` TO `app`@`%`", grant{}, false},
		{"SET DEFAULT ROLE `reader` FOR `app`@`%`", grant{}, false},
		{"", grant{}, false},
		{"GRANT SELECT ON `unterminated TO x", grant{}, false},
	}
	for _, tt := range tests {
		got, ok := parseGrant(tt.line)
		assert.Equal(t, tt.ok, ok, tt.line)
		assert.Equal(t, tt.want, got, tt.line)
	}
}

func TestValidateLikeMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"shop", "shop", true},
		{"shop", "shops", false},
		{"shop%", "shop_v2", true},
		{"%", "anything", true},
		{"sh_p", "shop", true},
		{`sh\_p`, "shop", false},
		{`sh\_p`, "sh_p", true},
		{"s%p%2", "shop_v2", true},
		{"s%x", "shop", false},
		{"", "", true},
		{"", "a", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, likeMatch(tt.pattern, tt.s), "%q LIKE %q", tt.s, tt.pattern)
	}
}

func TestValidatePrivileges(t *testing.T) {
	outbox := schema.TableName{Database: "shop", Table: "outbox"}
	maria := namesFor(gtid.MariaDB, version{10, 11, 0})
	tests := []struct {
		name   string
		in     privilegeInput
		status Status
		want   []string
		fix    string
	}{
		{name: "root", in: privilegeInput{user: "root@localhost", names: maria,
			grants: []string{"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"}},
			status: OK, want: []string{"root@localhost has REPLICATION SLAVE, BINLOG MONITOR, SELECT on shop.outbox"}},
		{name: "select only", in: privilegeInput{user: "app@%", names: maria,
			grants: []string{"GRANT USAGE ON *.* TO `app`@`%`", "GRANT SELECT ON `shop`.* TO `app`@`%`"}},
			status: Fail, want: []string{"app@% lacks REPLICATION SLAVE (to read the binlog), BINLOG MONITOR", "has SELECT on shop.outbox"},
			fix: "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'app'@'%';"},
		{name: "replica alias and replication client alias", in: privilegeInput{user: "app@%", names: maria,
			grants: []string{"GRANT REPLICATION REPLICA, REPLICATION CLIENT ON *.* TO `app`@`%`", "GRANT SELECT ON `shop`.`outbox` TO `app`@`%`"}},
			status: OK},
		{name: "replication on a database does not count", in: privilegeInput{user: "app@%", names: maria,
			grants: []string{"GRANT ALL PRIVILEGES ON `shop`.* TO `app`@`%`"}},
			status: Fail, want: []string{"has SELECT on shop.outbox"}, fix: "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'app'@'%';"},
		{name: "mysql names, no select", in: privilegeInput{user: "o'brien@10.0.%", names: namesFor(gtid.MySQL, version{8, 0, 36}),
			grants: []string{"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `o'brien`@`10.0.%`"}},
			status: Fail, want: []string{"lacks SELECT on shop.outbox"}, fix: "GRANT SELECT ON `shop`.`outbox` TO 'o''brien'@'10.0.%';"},
		{name: "super stands in for replication client on mysql", in: privilegeInput{user: "a@%", names: namesFor(gtid.MySQL, version{5, 7, 0}),
			grants: []string{"GRANT SUPER, REPLICATION SLAVE, SELECT ON *.* TO `a`@`%`"}}, status: OK},
		{name: "super does not on mariadb 10.5.2", in: privilegeInput{user: "a@%", names: maria,
			grants: []string{"GRANT SUPER, REPLICATION SLAVE, SELECT ON *.* TO `a`@`%`"}},
			status: Fail, fix: "GRANT BINLOG MONITOR ON *.* TO 'a'@'%';"},
		{name: "old mariadb asks for replication client", in: privilegeInput{user: "a@%", names: namesFor(gtid.MariaDB, version{10, 4, 0}),
			grants: []string{"GRANT REPLICATION SLAVE, SELECT ON *.* TO `a`@`%`"}},
			status: Fail, fix: "GRANT REPLICATION CLIENT ON *.* TO 'a'@'%';"},
		{name: "database pattern", in: privilegeInput{user: "a@%", names: maria,
			grants: []string{"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `a`@`%`", "GRANT SELECT ON `sh%`.* TO `a`@`%`"}}, status: OK},
		{name: "partial revoke", in: privilegeInput{user: "a@%", names: maria,
			grants: []string{"GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO `a`@`%`", "REVOKE SELECT ON `shop`.* FROM `a`@`%`"}},
			status: Fail, want: []string{"lacks SELECT on shop.outbox"}},
		{name: "probe beats grants", in: privilegeInput{user: "a@%", names: maria,
			grants: []string{"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `a`@`%`"},
			probe:  map[schema.TableName]selectAccess{outbox: selectAllowed}}, status: OK},
		{name: "denied probe beats grants", in: privilegeInput{user: "a@%", names: maria,
			grants: []string{"GRANT REPLICATION SLAVE, BINLOG MONITOR, SELECT ON *.* TO `a`@`%`"},
			probe:  map[schema.TableName]selectAccess{outbox: selectDenied}}, status: Fail},
		{name: "roles are named", in: privilegeInput{user: "a@%", names: maria,
			grants: []string{"GRANT `replicator` TO `a`@`%`", "GRANT SELECT ON *.* TO `a`@`%`"}},
			status: Fail, want: []string{"privileges of its roles (`replicator`) are not inspected", "SET DEFAULT ROLE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.tables = []schema.TableName{outbox}
			c := checkPrivileges(in)
			assert.Equal(t, tt.status, c.Status, c.String())
			for _, w := range tt.want {
				assert.Contains(t, c.String(), w)
			}
			if tt.fix != "" {
				assert.True(t, strings.HasPrefix(c.Fix, tt.fix), "fix %q starts with %q", c.Fix, tt.fix)
			}
		})
	}
}

func FuzzValidateParseGrant(f *testing.F) {
	for _, s := range []string{
		"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost`",
		"GRANT SELECT (`a`, `b`) ON `shop`.`t` TO `app`@`%`",
		"GRANT `r` TO `a`@`%`",
		"REVOKE SELECT ON `x`.* FROM `a`@`%`",
		"GRANT SELECT ON `a``b`.`c` TO x",
		"GRANT ( ON ) TO",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		g, ok := parseGrant(line)
		if !ok || g.role {
			return
		}
		if g.db == "" || g.table == "" || len(g.privs) == 0 {
			t.Fatalf("parseGrant(%q) = %+v: accepted without object or privileges", line, g)
		}
	})
}

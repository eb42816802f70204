package validate

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/gtid"
)

func TestValidateBinlogRetention(t *testing.T) {
	tests := []struct {
		name    string
		flavor  gtid.Flavor
		vars    map[string]string
		want    time.Duration
		setting string
	}{
		{"mysql 8 default", gtid.MySQL, map[string]string{varExpireSeconds: "2592000", varExpireDays: "0", varExpireAutoPurge: "ON"}, 30 * 24 * time.Hour, "binlog_expire_logs_seconds=2592000"},
		{"mysql auto purge off", gtid.MySQL, map[string]string{varExpireSeconds: "2592000", varExpireAutoPurge: "OFF"}, 0, "binlog_expire_logs_auto_purge=OFF"},
		{"mysql 5.7 days", gtid.MySQL, map[string]string{varExpireDays: "7"}, 7 * 24 * time.Hour, "expire_logs_days=7"},
		{"mysql 8.0 days when seconds 0", gtid.MySQL, map[string]string{varExpireSeconds: "0", varExpireDays: "3"}, 3 * 24 * time.Hour, "expire_logs_days=3"},
		{"mysql never", gtid.MySQL, map[string]string{varExpireSeconds: "0", varExpireDays: "0"}, 0, "binlog_expire_logs_seconds=0, expire_logs_days=0"},
		{"mariadb 10.11 default", gtid.MariaDB, map[string]string{varExpireSeconds: "0", varExpireDays: "0.000000"}, 0, "binlog_expire_logs_seconds=0"},
		{"mariadb seconds", gtid.MariaDB, map[string]string{varExpireSeconds: "86400", varExpireDays: "1.000000"}, 24 * time.Hour, "binlog_expire_logs_seconds=86400"},
		{"mariadb 10.5 fractional days", gtid.MariaDB, map[string]string{varExpireDays: "0.500000"}, 12 * time.Hour, "expire_logs_days=0.5"},
	}
	for _, tt := range tests {
		got, setting := binlogRetention(tt.flavor, tt.vars)
		assert.Equal(t, tt.want, got, tt.name)
		assert.Equal(t, tt.setting, setting, tt.name)
	}
}

func TestValidateCheckRetention(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	day := map[string]string{varExpireSeconds: "86400"}
	cpAged := func(age time.Duration) *checkpoint.Checkpoint { return &checkpoint.Checkpoint{Time: now.Add(-age)} }
	tests := []struct {
		name   string
		vars   map[string]string
		cp     *checkpoint.Checkpoint
		status Status
		want   []string
	}{
		{"never purged", map[string]string{varExpireSeconds: "0"}, cpAged(100 * 24 * time.Hour), OK, []string{"not purged by age"}},
		{"purged by size", map[string]string{varExpireSeconds: "0", varMaxBinlogTotal: "1073741824"}, nil, Warn, []string{"max_binlog_total_size=1073741824"}},
		{"no checkpoint", day, nil, OK, []string{"kept 24.0h", "no checkpoint"}},
		{"fresh, short retention", day, cpAged(time.Hour), Warn, []string{"the checkpoint is 1.0h old", "a router stopped longer than 24.0h (a weekend)", "binlog-router recover --since-checkpoint"}},
		{"fresh", map[string]string{varExpireSeconds: "604800"}, cpAged(time.Hour), OK, []string{"kept 7.0d", "the checkpoint is 1.0h old"}},
		{"past half", day, cpAged(13 * time.Hour), Warn, []string{"more than half", "start the router before 2025-03-01T23:00:00Z"}},
		{"older than retention", day, cpAged(49 * time.Hour), Fail, []string{"written 2.0d ago", "the server purges binlogs older than that"}},
	}
	c := checkRetention(retentionInput{flavor: gtid.MariaDB, vars: day, unread: true, now: now})
	assert.Equal(t, "OK   binlog retention: binlogs are kept 24.0h (binlog_expire_logs_seconds=86400); the checkpoint could not be read to compare with", c.String())
	for _, tt := range tests {
		c := checkRetention(retentionInput{flavor: gtid.MariaDB, vars: tt.vars, cp: tt.cp, now: now})
		assert.Equal(t, tt.status, c.Status, "%s: %s", tt.name, c)
		for _, w := range tt.want {
			assert.Contains(t, c.String(), w, tt.name)
		}
	}
}

func mustParse(t testing.TB, f gtid.Flavor, s string) *gtid.Set {
	t.Helper()
	set, err := gtid.Parse(f, s)
	require.NoError(t, err)
	return set
}

func TestValidateCheckPosition(t *testing.T) {
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	my := func(s string) *gtid.Set { return mustParse(t, gtid.MySQL, s) }
	ma := func(s string) *gtid.Set { return mustParse(t, gtid.MariaDB, s) }
	oldest := func(list string) *binlogStart {
		return &binlogStart{file: "mysql-bin.000007", before: ma(list)}
	}
	tests := []struct {
		name   string
		in     positionInput
		status Status
		want   []string
		cause  Cause // of a Fail: the cause run stops with
	}{
		{"mysql covered", positionInput{flavor: gtid.MySQL, pos: my(uuid + ":1-50"), from: "the checkpoint",
			executed: my(uuid + ":1-100"), purged: my(uuid + ":1-10")}, OK, []string{"every transaction after the checkpoint [" + uuid + ":1-50]"}, CauseError},
		{"mysql purged", positionInput{flavor: gtid.MySQL, pos: my(uuid + ":1-5"), from: "the checkpoint",
			executed: my(uuid + ":1-100"), purged: my(uuid + ":1-10")}, Fail,
			[]string{"the server purged [" + uuid + ":6-10]", "binlog-router checkpoint set --name r --gtid " + uuid + ":1-10"}, CausePurged},
		{"mysql ahead", positionInput{flavor: gtid.MySQL, pos: my(uuid + ":1-200"), from: "the checkpoint",
			executed: my(uuid + ":1-100"), purged: my("")}, Fail,
			[]string{"never logged: [" + uuid + ":101-200]", "--mysql-addr"}, CauseError},
		{"mariadb covered", positionInput{flavor: gtid.MariaDB, pos: ma("0-1-50,1-2-9"), from: "the checkpoint",
			executed: ma("0-1-60,1-2-9"), oldest: oldest("0-1-40,1-2-9")}, OK, []string{"the oldest, mysql-bin.000007, starts after [0-1-40,1-2-9]"}, CauseError},
		{"mariadb at the list exactly", positionInput{flavor: gtid.MariaDB, pos: ma("0-1-40"), from: "the checkpoint",
			executed: ma("0-1-60"), oldest: oldest("0-1-40")}, OK, nil, CauseError},
		{"mariadb purged", positionInput{flavor: gtid.MariaDB, pos: ma("0-1-30"), from: "the checkpoint",
			executed: ma("0-1-60,1-2-9"), oldest: oldest("0-1-40,1-2-9")}, Fail,
			[]string{"domain 0 seq 31 to 40 (up to 0-1-40)", "domain 1 seq 1 to 9 (up to 1-2-9)", "checkpoint set --name r --gtid 0-1-40,1-2-9"}, CausePurged},
		// run --start earliest starts at the oldest binlog: a warning.
		{"mariadb earliest after purge", positionInput{flavor: gtid.MariaDB, pos: ma(""), from: "--start earliest", start: true, earliest: true,
			executed: ma("0-1-60"), oldest: oldest("0-1-40")}, Warn,
			[]string{"would start after --start earliest []", "are not published", "republish them from the outbox table"}, CauseError},
		// run refuses such a --start: configuration.
		{"mariadb --start gtid after purge", positionInput{flavor: gtid.MariaDB, pos: ma("0-1-30"), from: "--start gtid:0-1-30", start: true,
			executed: ma("0-1-60"), oldest: oldest("0-1-40")}, Fail,
			[]string{"start at the oldest binlog with --start gtid:0-1-40"}, CauseConfig},
		{"mariadb --start ahead", positionInput{flavor: gtid.MariaDB, pos: ma("0-1-70"), from: "--start gtid:0-1-70", start: true,
			executed: ma("0-1-60"), oldest: oldest("")}, Fail, []string{"never logged: [0-1-70]"}, CauseConfig},
		{"mariadb ahead", positionInput{flavor: gtid.MariaDB, pos: ma("0-1-70"), from: "the checkpoint",
			executed: ma("0-1-60"), oldest: oldest("")}, Fail, []string{"never logged: [0-1-70]"}, CauseError},
		{"mariadb unknown domain", positionInput{flavor: gtid.MariaDB, pos: ma("0-1-10,5-5-5"), from: "the checkpoint",
			executed: ma("0-1-60"), oldest: oldest("")}, Fail, []string{"never logged: [5-5-5]"}, CauseError},
		{"mariadb oldest unknown", positionInput{flavor: gtid.MariaDB, pos: ma("0-1-30"), from: "the checkpoint",
			executed: ma("0-1-60"), oldestErr: errors.New("SHOW BINARY LOGS: access denied")}, Warn, []string{"access denied", "BINLOG MONITOR"}, CauseError},
	}
	for _, tt := range tests {
		tt.in.name = "r"
		c := checkPosition(tt.in)
		assert.Equal(t, tt.status, c.Status, "%s: %s", tt.name, c)
		assert.Equal(t, tt.cause, c.Cause, tt.name)
		for _, w := range tt.want {
			assert.Contains(t, c.String(), w, tt.name)
		}
	}
}

func TestValidateParseGTIDList(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{"[]", "", false},
		{"[0-1-5]", "0-1-5", false},
		{"[0-1-5,1-2-3]", "0-1-5,1-2-3", false},
		// One domain from two servers: the domain's most recent comes last.
		{"[0-2-90,0-1-100]", "0-1-100", false},
		{" [0-1-5, 1-2-3] ", "0-1-5,1-2-3", false},
		{"0-1-5", "", true},
		{"[0-1]", "", true},
	}
	for _, tt := range tests {
		got, err := parseGTIDList(tt.in)
		if tt.err {
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got.String(), tt.in)
	}
}

func FuzzValidateParseGTIDList(f *testing.F) {
	for _, s := range []string{"[]", "[0-1-5]", "[0-1-5,1-2-3]", "[0-2-90,0-1-100]", "[", "[,]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, info string) {
		set, err := parseGTIDList(info)
		if err != nil {
			return
		}
		again, err := gtid.Parse(gtid.MariaDB, set.String())
		if err != nil || !again.Equal(set) {
			t.Fatalf("parseGTIDList(%q) = %q, which does not parse back: %v", info, set, err)
		}
		for _, e := range mariadbEntries(set) {
			if !set.ContainsMariaDB(e.domain, e.seq) {
				t.Fatalf("entry %+v of %q not in the set", e, set)
			}
		}
	})
}

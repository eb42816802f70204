package config

import (
	"flag"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeFlagRow is one flag of a row of a README flag table.
type readmeFlagRow struct {
	flag string // without the dashes; may end in * (--column-*)
	def  string // the default cell's text for this flag, backticks removed
	line int
}

var readmeFlagRE = regexp.MustCompile("`--([a-z0-9*-]+)`")

// readmeFlagTables returns the flags of the README's flag tables: the
// tables whose first two header cells are "flag" (or "setting") and
// "default". A default cell "see Memory" defers to another table; a cell
// of one value gives every flag of its row that value; otherwise the cell
// has one comma-separated value per flag.
func readmeFlagTables(t *testing.T, readme string) []readmeFlagRow {
	t.Helper()
	var rows []readmeFlagRow
	inTable, header := false, false
	for i, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable, header = false, false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if !header {
			header = true
			inTable = len(cells) >= 2 && (cells[0] == "flag" || cells[0] == "setting") && cells[1] == "default"
			continue
		}
		if !inTable || strings.HasPrefix(cells[0], "---") {
			continue
		}
		var flags []string
		for _, m := range readmeFlagRE.FindAllStringSubmatch(cells[0], -1) {
			flags = append(flags, m[1])
		}
		if len(flags) == 0 {
			continue // a row of a setting without a flag, "(fixed)"
		}
		def := strings.ReplaceAll(cells[1], "`", "")
		if def == "see Memory" {
			continue // its flags have rows of their own
		}
		defs := []string{def}
		if len(flags) > 1 && strings.Contains(def, ",") {
			defs = strings.Split(def, ",")
		}
		require.True(t, len(defs) == 1 || len(defs) == len(flags), "README.md:%d: %d defaults for %d flags", i+1, len(defs), len(flags))
		for j, f := range flags {
			d := defs[0]
			if len(defs) > 1 {
				d = defs[j]
			}
			rows = append(rows, readmeFlagRow{flag: f, def: strings.TrimSpace(d), line: i + 1})
		}
	}
	return rows
}

// sameDefault reports whether the README's text states the default the
// flag package prints (defValue), allowing the README's units: "2m" for
// 2m0s, "32 MiB" for 33554432.
func sameDefault(readme, defValue string) bool {
	if readme == defValue {
		return true
	}
	if a, err := time.ParseDuration(readme); err == nil {
		b, err := time.ParseDuration(defValue)
		return err == nil && a == b
	}
	if n, ok := strings.CutSuffix(readme, " MiB"); ok {
		a, err1 := strconv.ParseInt(n, 10, 64)
		b, err2 := strconv.ParseInt(defValue, 10, 64)
		return err1 == nil && err2 == nil && a<<20 == b
	}
	return false
}

// TestFlagTableMatchesREADME: every flag of the README's flag tables is a
// flag of the table with the default the README states, and every flag of
// every command is in the README's flag tables.
func TestFlagTableMatchesREADME(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	rows := readmeFlagTables(t, string(data))
	require.Greater(t, len(rows), 40, "README flag tables found")

	c := Default()
	fs := flag.NewFlagSet("all", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	specs := map[string]flagSpec{}
	for _, f := range flagTable {
		f.bind(&c, fs, f.usage)
		specs[f.name] = f
	}
	documented := map[string]bool{}
	check := func(r readmeFlagRow, name string) {
		f, ok := specs[name]
		if !assert.True(t, ok, "README.md:%d: --%s is not a flag of binlog-router", r.line, name) {
			return
		}
		documented[name] = true
		want := fs.Lookup(name).DefValue
		if f.doc != "" {
			want = f.doc
		}
		assert.True(t, sameDefault(r.def, want), "README.md:%d: --%s: README default %q, the flag's %q", r.line, name, r.def, want)
	}
	for _, r := range rows {
		prefix, wildcard := strings.CutSuffix(r.flag, "*")
		if !wildcard {
			check(r, r.flag)
			continue
		}
		n := 0
		for _, f := range flagTable {
			if strings.HasPrefix(f.name, prefix) {
				check(r, f.name)
				n++
			}
		}
		assert.NotZero(t, n, "README.md:%d: --%s matches no flag", r.line, r.flag)
	}
	for _, f := range flagTable {
		assert.True(t, documented[f.name], "--%s is in no flag table of README.md", f.name)
	}
}

// TestFlagTable checks the table's own rules: one entry per name, every
// flag of run taken by every Router command, a command ignores only flags
// it takes, and a README default only for a flag whose own is "".
func TestFlagTable(t *testing.T) {
	c := Default()
	seen := map[string]bool{}
	for _, f := range flagTable {
		assert.False(t, seen[f.name], "--%s appears twice", f.name)
		seen[f.name] = true
		assert.NotZero(t, f.cmds, "--%s: no command takes it", f.name)
		assert.NotEmpty(t, f.usage, f.name)
		if f.cmds&CmdRun != 0 {
			assert.Equal(t, Router, f.cmds&Router, "--%s: a flag of run must be taken by every command that reuses the router's command line", f.name)
		}
		assert.Zero(t, f.ignores&^f.cmds, "--%s: ignored by a command that does not take it", f.name)
		if f.doc != "" {
			fs := flag.NewFlagSet("one", flag.ContinueOnError)
			f.bind(&c, fs, f.usage)
			assert.Empty(t, fs.Lookup(f.name).DefValue, "--%s: a README default beside its own", f.name)
		}
	}
	// Every command registers without a clash.
	for _, cmd := range []Command{CmdRun, CmdValidate, CmdReplay, CmdCheckpointShow, CmdCheckpointSet, CmdCheckpointReset, CmdSchema} {
		c := Default()
		c.Register(flag.NewFlagSet("cmd", flag.ContinueOnError), cmd)
	}
}

// TestDefaultIsFresh: two Defaults share no list.
func TestDefaultIsFresh(t *testing.T) {
	a, b := Default(), Default()
	a.KafkaBrokers[0] = "changed:1"
	assert.Equal(t, "127.0.0.1:9092", b.KafkaBrokers[0])
}

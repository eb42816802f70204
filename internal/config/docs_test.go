package config

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docFlagRow is one flag of a row of a documented flag table.
type docFlagRow struct {
	flag string // without the dashes; may end in * (--column-*)
	def  string // the default cell's text for this flag, backticks removed
	at   string // file:line of the row
}

var docFlagRE = regexp.MustCompile("`--([a-z0-9*-]+)`")

// docFlagTables returns the flags of the flag tables of one Markdown
// document: the tables whose first two header cells are "flag" (or
// "setting") and "default". A default cell "see ..." (a link to
// another page's table) defers to that table; a cell of one value gives
// every flag of its row that value; otherwise the cell has one
// comma-separated value per flag.
func docFlagTables(t *testing.T, name, doc string) []docFlagRow {
	t.Helper()
	var rows []docFlagRow
	inTable, header := false, false
	for i, line := range strings.Split(doc, "\n") {
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
		for _, m := range docFlagRE.FindAllStringSubmatch(cells[0], -1) {
			flags = append(flags, m[1])
		}
		if len(flags) == 0 {
			continue // a row of a setting without a flag, "(fixed)"
		}
		at := fmt.Sprintf("%s:%d", name, i+1)
		def := strings.ReplaceAll(cells[1], "`", "")
		if strings.HasPrefix(def, "see ") {
			continue // its flags have rows of their own, on the page it links
		}
		defs := []string{def}
		if len(flags) > 1 && strings.Contains(def, ",") {
			defs = strings.Split(def, ",")
		}
		require.True(t, len(defs) == 1 || len(defs) == len(flags), "%s: %d defaults for %d flags", at, len(defs), len(flags))
		for j, f := range flags {
			d := defs[0]
			if len(defs) > 1 {
				d = defs[j]
			}
			rows = append(rows, docFlagRow{flag: f, def: strings.TrimSpace(d), at: at})
		}
	}
	return rows
}

// sameDefault reports whether the documented text states the default the
// flag package prints (defValue), allowing the documents' units: "2m" for
// 2m0s, "32 MiB" for 33554432.
func sameDefault(doc, defValue string) bool {
	if doc == defValue {
		return true
	}
	if a, err := time.ParseDuration(doc); err == nil {
		b, err := time.ParseDuration(defValue)
		return err == nil && a == b
	}
	if n, ok := strings.CutSuffix(doc, " MiB"); ok {
		a, err1 := strconv.ParseInt(n, 10, 64)
		b, err2 := strconv.ParseInt(defValue, 10, 64)
		return err1 == nil && err2 == nil && a<<20 == b
	}
	return false
}

// TestFlagTablesMatchDocs: every flag of the flag tables of README.md
// and docs/*.md (docs/flags.md, docs/security.md, docs/memory.md, and the
// pages of checkpoint, replay and schema) is a flag of the table with the
// default the page states, and every flag of every command is in one of
// those tables.
func TestFlagTablesMatchDocs(t *testing.T) {
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.Contains(t, docs, "../../docs/flags.md")
	var rows []docFlagRow
	for _, path := range append([]string{"../../README.md"}, docs...) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		rows = append(rows, docFlagTables(t, strings.TrimPrefix(path, "../../"), string(data))...)
	}
	require.Greater(t, len(rows), 40, "flag tables found in README.md and docs/")

	c := Default()
	fs := flag.NewFlagSet("all", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	specs := map[string]flagSpec{}
	for _, f := range flagTable {
		f.bind(&c, fs, f.usage)
		specs[f.name] = f
	}
	documented := map[string]bool{}
	check := func(r docFlagRow, name string) {
		f, ok := specs[name]
		if !assert.True(t, ok, "%s: --%s is not a flag of binlog-router", r.at, name) {
			return
		}
		documented[name] = true
		want := fs.Lookup(name).DefValue
		if f.doc != "" {
			want = f.doc
		}
		assert.True(t, sameDefault(r.def, want), "%s: --%s: documented default %q, the flag's %q", r.at, name, r.def, want)
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
		assert.NotZero(t, n, "%s: --%s matches no flag", r.at, r.flag)
	}
	for _, f := range flagTable {
		assert.True(t, documented[f.name], "--%s is in no flag table of README.md or docs/ (docs/flags.md lists run's)", f.name)
	}
}

// TestFlagTable checks the table's own rules: one entry per name, every
// flag of run taken by every Router command, a command ignores only flags
// it takes, and a documented default only for a flag whose own is "".
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
			assert.Empty(t, fs.Lookup(f.name).DefValue, "--%s: a documented default beside its own", f.name)
		}
	}
	// Every command registers without a clash.
	for _, cmd := range []Command{CmdRun, CmdValidate, CmdReplay, CmdCheckpointShow, CmdCheckpointSet, CmdCheckpointReset, CmdSchema, CmdPrune} {
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

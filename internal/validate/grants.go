package validate

import (
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// grant is one line of SHOW GRANTS.
type grant struct {
	revoke bool     // a partial revoke (MySQL partial_revokes=ON): REVOKE ... ON db.* FROM ...
	role   bool     // GRANT `role` TO user: no privileges of its own here
	privs  []string // upper case, column lists dropped: "SELECT", "REPLICATION SLAVE", "ALL PRIVILEGES"
	db     string   // unquoted; "*" for every database; a LIKE pattern when table is "*"
	table  string   // unquoted; "*" for every table
}

// parseGrant parses one line of SHOW GRANTS as MySQL and MariaDB print it:
//
//	GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '...'
//	GRANT SELECT ON `shop`.`outbox` TO `app`@`%`
//	GRANT SELECT (`a`, `b`) ON `shop`.`t` TO ...
//	GRANT `reader` TO `app`@`%`
//
// ok is false for lines that grant nothing this package looks at: routine
// and proxy privileges, and anything it cannot read.
func parseGrant(line string) (g grant, ok bool) {
	s := strings.TrimSpace(line)
	switch {
	case hasPrefixFold(s, "GRANT "):
		s = s[len("GRANT "):]
	case hasPrefixFold(s, "REVOKE "):
		s, g.revoke = s[len("REVOKE "):], true
	default:
		return grant{}, false
	}
	on := topLevelIndex(s, " ON ")
	if on < 0 {
		g.role = !g.revoke && topLevelIndex(s, " TO ") >= 0
		return g, g.role
	}
	for _, p := range splitTopLevel(s[:on], ',') {
		if i := strings.IndexByte(p, '('); i >= 0 {
			p = p[:i] // column-level: SELECT (`a`, `b`)
		}
		if p = strings.ToUpper(strings.Join(strings.Fields(p), " ")); p != "" {
			g.privs = append(g.privs, p)
		}
	}
	obj := strings.TrimSpace(s[on+len(" ON "):])
	switch {
	case hasPrefixFold(obj, "TABLE "):
		obj = strings.TrimSpace(obj[len("TABLE "):])
	case hasPrefixFold(obj, "FUNCTION "), hasPrefixFold(obj, "PROCEDURE "), hasPrefixFold(obj, "PACKAGE "):
		return grant{}, false
	}
	var rest string
	var found bool
	if g.db, rest, found = cutIdentifier(obj); !found {
		return grant{}, false // PROXY ON ''@'%'
	}
	if !strings.HasPrefix(rest, ".") {
		return grant{}, false
	}
	if g.table, _, found = cutIdentifier(rest[1:]); !found {
		return grant{}, false
	}
	return g, len(g.privs) > 0
}

// cutIdentifier reads a backtick-quoted or bare identifier, or "*", from
// the start of s.
func cutIdentifier(s string) (ident, rest string, ok bool) {
	switch {
	case strings.HasPrefix(s, "*"):
		return "*", s[1:], true
	case strings.HasPrefix(s, "`"):
		ident, rest, err := schema.CutQuoted(s)
		return ident, rest, err == nil && ident != ""
	}
	end := strings.IndexAny(s, ". \t")
	if end < 0 {
		end = len(s)
	}
	if end == 0 || strings.ContainsAny(s[:end], "'\"@") {
		return "", "", false
	}
	return s[:end], s[end:], true
}

// topLevelIndex returns the index of sep (matched case-insensitively) in s
// outside backticks, quotes and parentheses, or -1.
func topLevelIndex(s, sep string) int {
	depth, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '`' || c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && len(s)-i >= len(sep) && strings.EqualFold(s[i:i+len(sep)], sep):
			return i
		}
	}
	return -1
}

// splitTopLevel splits s at sep outside backticks, quotes and parentheses.
func splitTopLevel(s string, sep byte) []string {
	var parts []string
	for {
		i := topLevelIndex(s, string(sep))
		if i < 0 {
			return append(parts, s)
		}
		parts, s = append(parts, s[:i]), s[i+1:]
	}
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// has reports whether g grants one of privs, or ALL.
func (g grant) has(privs ...string) bool {
	for _, p := range g.privs {
		if p == "ALL" || p == "ALL PRIVILEGES" {
			return true
		}
		for _, want := range privs {
			if p == want {
				return true
			}
		}
	}
	return false
}

// global reports whether g is on *.*.
func (g grant) global() bool { return g.db == "*" && g.table == "*" }

// covers reports whether g is on t: *.*, a database pattern matching t's
// database, or t itself.
func (g grant) covers(t schema.TableName) bool {
	switch {
	case g.global():
		return true
	case g.table == "*":
		return likeMatch(g.db, t.Database)
	}
	return g.db == t.Database && g.table == t.Table
}

// likeMatch matches s against a database-level grant's name, a LIKE
// pattern: % any run, _ any one character, \ escapes the next.
func likeMatch(pattern, s string) bool {
	p, r := []rune(pattern), []rune(s)
	// Iterative wildcard matching with one backtrack point for %.
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(r) {
		switch {
		case pi < len(p) && p[pi] == '%':
			star, mark = pi, si
			pi++
		case pi < len(p) && p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == r[si]:
			pi += 2
			si++
		case pi < len(p) && p[pi] != '\\' && (p[pi] == '_' || p[pi] == r[si]):
			pi++
			si++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}

// privilegeNames are the privileges the router needs under the names this
// server prints and accepts.
type privilegeNames struct {
	replication string   // reads the binlog
	monitor     string   // lists binlogs and positions
	monitorAlso []string // other names that grant what monitor does
}

func namesFor(flavor gtid.Flavor, v version) privilegeNames {
	if flavor == gtid.MariaDB && v.atLeast(10, 5, 2) {
		// 10.5.2 split BINLOG MONITOR out of REPLICATION CLIENT (now an
		// alias) and out of SUPER.
		return privilegeNames{replication: "REPLICATION SLAVE", monitor: "BINLOG MONITOR", monitorAlso: []string{"REPLICATION CLIENT"}}
	}
	return privilegeNames{replication: "REPLICATION SLAVE", monitor: "REPLICATION CLIENT", monitorAlso: []string{"SUPER"}}
}

// selectAccess is what a probe SELECT on an outbox table showed.
type selectAccess int

const (
	selectUnknown selectAccess = iota // the table is missing, or the probe failed otherwise
	selectAllowed
	selectDenied
)

// privilegeInput is what checkPrivileges judges.
type privilegeInput struct {
	user   string // CURRENT_USER(): user@host
	grants []string
	names  privilegeNames
	tables []schema.TableName
	probe  map[schema.TableName]selectAccess
}

// checkPrivileges judges the grants of the current user: REPLICATION SLAVE
// and the monitor privilege on *.*, and SELECT on every outbox table (from
// the probe when it was conclusive, else from the grants).
func checkPrivileges(in privilegeInput) Check {
	const name = "privileges"
	var grants []grant
	var roles []string
	for _, line := range in.grants {
		g, ok := parseGrant(line)
		switch {
		case !ok:
		case g.role:
			roles = append(roles, strings.TrimSpace(strings.TrimPrefix(line[:topLevelIndex(line, " TO ")], "GRANT ")))
		default:
			grants = append(grants, g)
		}
	}
	globally := func(privs ...string) bool {
		for _, g := range grants {
			if !g.revoke && g.global() && g.has(privs...) {
				return true
			}
		}
		return false
	}
	var have, lack []string
	var fixes []string
	n := in.names
	replication := globally(n.replication, "REPLICATION REPLICA")
	monitor := globally(append([]string{n.monitor}, n.monitorAlso...)...)
	var globalLack []string
	if replication {
		have = append(have, n.replication)
	} else {
		lack = append(lack, n.replication+" (to read the binlog)")
		globalLack = append(globalLack, n.replication)
	}
	if monitor {
		have = append(have, n.monitor)
	} else {
		lack = append(lack, n.monitor+" (to list binlogs and positions)")
		globalLack = append(globalLack, n.monitor)
	}
	account := quoteAccount(in.user)
	if len(globalLack) > 0 {
		fixes = append(fixes, fmt.Sprintf("GRANT %s ON *.* TO %s;", strings.Join(globalLack, ", "), account))
	}
	for _, t := range in.tables {
		allowed := false
		switch in.probe[t] {
		case selectAllowed:
			allowed = true
		case selectUnknown:
			allowed = selectGranted(grants, t)
		}
		if allowed {
			have = append(have, "SELECT on "+t.String())
			continue
		}
		lack = append(lack, "SELECT on "+t.String()+" (to read its column names)")
		fixes = append(fixes, fmt.Sprintf("GRANT SELECT ON %s TO %s;", t.QuotedString(), account))
	}
	if len(lack) == 0 {
		return ok(name, "%s has %s", in.user, strings.Join(have, ", "))
	}
	detail := fmt.Sprintf("%s lacks %s", in.user, strings.Join(lack, ", "))
	if len(have) > 0 {
		detail += "; has " + strings.Join(have, ", ")
	}
	if len(roles) > 0 {
		detail += fmt.Sprintf("; privileges of its roles (%s) are not inspected", strings.Join(roles, ", "))
	}
	fix := strings.Join(fixes, " ")
	if len(roles) > 0 {
		fix += " (or, if a role grants them, make it the user's default role: SET DEFAULT ROLE)"
	}
	return fail(name, fix, "%s", detail)
}

// selectGranted reports whether the grants give SELECT on t, a partial
// revoke of its database taking it away again.
func selectGranted(grants []grant, t schema.TableName) bool {
	granted := false
	for _, g := range grants {
		if !g.revoke && g.covers(t) && g.has("SELECT") {
			granted = true
		}
	}
	for _, g := range grants {
		if g.revoke && g.table == "*" && g.db == t.Database && g.has("SELECT") {
			return false
		}
	}
	return granted
}

// quoteAccount turns CURRENT_USER()'s user@host into 'user'@'host'.
func quoteAccount(userHost string) string {
	user, host := userHost, "%"
	if i := strings.LastIndexByte(userHost, '@'); i >= 0 {
		user, host = userHost[:i], userHost[i+1:]
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	return q(user) + "@" + q(host)
}

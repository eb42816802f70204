package validate

import (
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// NearMissError stops a router started with --allow-missing-table when a
// table whose name is close to a missing outbox table is created or
// written: most likely the outbox table under a mistyped name, whose
// rows the checkpoint must not pass unpublished.
type NearMissError struct {
	Configured schema.TableName // the missing outbox table
	Seen       schema.TableName // the table with the close name
	What       string           // "has rows" or the statement that names it
}

func (e *NearMissError) Unwrap() error { return ErrMissingTable }

func (e *NearMissError) Error() string {
	return fmt.Sprintf("outbox table %s did not exist at start (--allow-missing-table), and table %s, whose name is close to it, %s: if %s is the outbox table, correct --outbox-table; otherwise rename one of them. The checkpoint stays before this transaction",
		e.Configured, e.Seen, e.What, e.Seen)
}

// Guard implements binlog.TableGuard for the outbox tables missing at
// start (--allow-missing-table): it stops the reader at the first rows
// event or CREATE/RENAME/INSERT INTO of a table whose name is close to a
// missing one. The zero Guard guards nothing until Arm; a nil *Guard
// guards nothing. Used from the reading goroutine only, after Arm.
type Guard struct {
	missing  []schema.TableName
	harmless map[schema.TableName]bool // names already found far from every missing table
}

// Arm makes g guard the tables missing in r.
func (g *Guard) Arm(r TableReport) {
	g.missing, g.harmless = nil, map[schema.TableName]bool{}
	for _, m := range r.Missing {
		g.missing = append(g.missing, m.Table)
	}
}

// Rows stops at the rows of a table whose name is close to a missing
// outbox table.
func (g *Guard) Rows(database, table string) error {
	return g.judge(schema.TableName{Database: database, Table: table}, "has rows in the binlog")
}

// DDL stops at a statement that creates, renames to or inserts into a
// table whose name is close to a missing outbox table.
func (g *Guard) DDL(database, query string) error {
	if g == nil || len(g.missing) == 0 {
		return nil
	}
	for _, t := range namedTables(database, query) {
		if err := g.judge(t, fmt.Sprintf("is named by %q", shorten(query, 200))); err != nil {
			return err
		}
	}
	return nil
}

func (g *Guard) judge(t schema.TableName, what string) error {
	if g == nil || len(g.missing) == 0 || g.harmless[t] {
		return nil
	}
	for _, m := range g.missing {
		if m.NearMiss(t) {
			return &NearMissError{Configured: m, Seen: t, What: what}
		}
	}
	g.harmless[t] = true
	return nil
}

// namedTables returns the tables a statement creates, renames to or
// writes into: the name after TABLE (skipping IF NOT EXISTS), TO, AS or
// INTO. It errs on the side of more names; a name that is no table is
// harmless unless it is close to a missing outbox table.
func namedTables(database, query string) []schema.TableName {
	toks := identifiers(query)
	var out []schema.TableName
	for i := 0; i < len(toks); i++ {
		switch strings.ToUpper(toks[i]) {
		case "TABLE", "TO", "AS", "INTO":
		default:
			continue
		}
		j := i + 1
		for j < len(toks) && (strings.EqualFold(toks[j], "IF") || strings.EqualFold(toks[j], "NOT") || strings.EqualFold(toks[j], "EXISTS")) {
			j++
		}
		if j >= len(toks) {
			break
		}
		name := toks[j]
		if j+2 < len(toks) && toks[j+1] == "." {
			out = append(out, schema.TableName{Database: name, Table: toks[j+2]})
			continue
		}
		if name != "." {
			out = append(out, schema.TableName{Database: database, Table: name})
		}
	}
	return out
}

// identifiers splits SQL text into words, backquoted names (unquoted) and
// dots; quoted strings are skipped.
func identifiers(q string) []string {
	var out []string
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == '`':
			var b strings.Builder
			j := i + 1
			for j < len(q) {
				if q[j] == '`' {
					if j+1 < len(q) && q[j+1] == '`' {
						b.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(q[j])
				j++
			}
			out = append(out, b.String())
			i = j + 1
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) && q[j] != c {
				if q[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '.':
			out = append(out, ".")
			i++
		case isIdentByte(c):
			j := i
			for j < len(q) && isIdentByte(q[j]) {
				j++
			}
			out = append(out, q[i:j])
			i = j
		default:
			i++
		}
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

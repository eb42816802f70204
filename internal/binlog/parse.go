package binlog

import (
	"regexp"
	"strings"
	"sync"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// parseMu serialises parseDDL: it adds to the TiDB parser's global tables
// of character sets and collations.
var parseMu sync.Mutex

// unknownName is the parser's error for a character set or collation it
// does not know.
var unknownName = regexp.MustCompile(`Unknown (character set|collation): '([^']+)'`)

// nextCollationID numbers the collations parseDDL adds, far above the
// servers' ids (charsetOf never reads the parser's table for them).
var nextCollationID = 1 << 20

// parseDDL parses query with p. The TiDB parser accepts the character sets
// TiDB supports (utf8mb4, latin1, ascii, binary, ...) and MySQL's
// collations by name; a statement naming another set of the servers
// (cp1250, utf16, ucs2) or a collation only MariaDB has
// (utf8mb4_uca1400_ai_ci, utf8mb4_nopad_bin) fails. Such a name is added
// to the parser's tables (a collation with the character set its name
// begins with) and the statement parsed again. Anything else is the
// parser's error.
func parseDDL(p *parser.Parser, query string) ([]ast.StmtNode, error) {
	parseMu.Lock()
	defer parseMu.Unlock()
	for {
		stmts, _, err := p.Parse(query, "", "")
		if err == nil {
			return stmts, nil
		}
		m := unknownName.FindStringSubmatch(err.Error())
		if m == nil || !register(m[1], strings.ToLower(m[2])) {
			return nil, err
		}
	}
}

// register adds a server character set or collation to the parser's
// tables; false when it is not a server's, or already there.
func register(kind, name string) bool {
	if kind == "character set" {
		cs := schema.CanonicalCharset(name)
		if _, ok := charsetMaxLen(cs); !ok {
			return false
		}
		c, _ := charset.GetCharsetInfo(tidbName(cs)) // known to TiDB, not supported by it
		if c == nil {
			return false
		}
		if _, there := charset.CharacterSetInfos[c.Name]; there {
			return false
		}
		charset.AddCharset(c)
		return true
	}
	cs := schema.CollationCharset(name)
	if _, ok := charsetMaxLen(cs); !ok {
		return false
	}
	if _, err := charset.GetCollationByName(name); err == nil {
		return false
	}
	charset.AddCollation(&charset.Collation{ID: nextCollationID, CharsetName: tidbName(cs), Name: name})
	nextCollationID++
	return true
}

// national matches the NATIONAL character types (NCHAR, NVARCHAR,
// NATIONAL CHAR), whose character set (utf8mb3) the parser drops.
var national = regexp.MustCompile(`(?i)\b(national|nchar|nvarchar)\b`)

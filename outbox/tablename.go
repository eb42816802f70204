package outbox

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxIdentifierLength is MySQL's and MariaDB's limit for a database, table
// or column name, in characters.
const maxIdentifierLength = 64

// quoteTable parses "table" or "db.table" (either part may be quoted with
// backticks, a doubled backtick inside quotes standing for one backtick, as
// the router's --outbox-table takes it) and returns it quoted for SQL:
// `table` or `db`.`table`.
func quoteTable(name string) (string, error) {
	s := strings.TrimSpace(name)
	if s == "" {
		return "", errors.New("empty table name; want table or database.table, e.g. outbox or app.outbox")
	}
	var parts []string
	for {
		var part string
		if strings.HasPrefix(s, "`") {
			var err error
			if part, s, err = cutQuoted(s); err != nil {
				return "", err
			}
		} else {
			end := strings.IndexByte(s, '.')
			if end < 0 {
				end = len(s)
			}
			part, s = s[:end], s[end:]
			if i := strings.IndexFunc(part, func(r rune) bool { return r == '`' || unicode.IsSpace(r) }); i >= 0 {
				return "", fmt.Errorf("unquoted name %q contains %q; quote it with backticks", part, part[i:i+1])
			}
		}
		if err := checkIdentifier(part); err != nil {
			return "", err
		}
		parts = append(parts, quoteIdentifier(part))
		if s == "" {
			break
		}
		if s[0] != '.' {
			return "", fmt.Errorf("unexpected %q after `%s`; want a dot between database and table", s, part)
		}
		s = s[1:]
	}
	if len(parts) > 2 {
		return "", errors.New("more than two parts; want table or database.table")
	}
	return strings.Join(parts, "."), nil
}

// cutQuoted reads one backtick-quoted identifier from the start of s and
// returns it unquoted along with the rest of s.
func cutQuoted(s string) (ident, rest string, err error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '`' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '`' {
			b.WriteByte('`')
			i++
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", errors.New("unterminated backtick quote; close it or double a backtick inside the name")
}

// checkIdentifier rejects names the server would refuse.
func checkIdentifier(name string) error {
	switch {
	case name == "":
		return errors.New("empty name part; want table or database.table")
	case !utf8.ValidString(name):
		return fmt.Errorf("name %q is not valid UTF-8", name)
	case utf8.RuneCountInString(name) > maxIdentifierLength:
		return fmt.Errorf("name %q is longer than %d characters", name, maxIdentifierLength)
	case strings.HasSuffix(name, " "):
		return fmt.Errorf("name %q ends with a space", name)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("name %q contains a NUL character", name)
	}
	return nil
}

// quoteIdentifier quotes a name with backticks, doubling any backtick in it.
func quoteIdentifier(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

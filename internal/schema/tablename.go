package schema

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TableName is a table qualified by its database (schema), as given to
// --outbox-table.
type TableName struct {
	Database string // unquoted database name
	Table    string // unquoted table name
}

// ParseTableName parses "db.table". Either part may be quoted with
// backticks, and a doubled backtick inside quotes stands for one backtick:
//
//	app.outbox
//	`my.app`.`outbox`
//
// An unquoted part may not contain a dot, a backtick or white space. Both
// parts are required. Surrounding white space is ignored.
func ParseTableName(s string) (TableName, error) {
	parts, err := SplitIdentifiers(s)
	if err != nil {
		return TableName{}, fmt.Errorf("parsing table name %q: %w", s, err)
	}
	if len(parts) != 2 {
		return TableName{}, fmt.Errorf("parsing table name %q: want database.table, e.g. app.outbox (quote a name containing a dot with backticks)", s)
	}
	return TableName{Database: parts[0], Table: parts[1]}, nil
}

// String returns "db.table", quoting a part with backticks only when it
// needs it, so that ParseTableName(t.String()) == t for every t that
// ParseTableName returns. It is meant for messages and flags; use
// QuotedString in SQL.
func (t TableName) String() string {
	return maybeQuote(t.Database) + "." + maybeQuote(t.Table)
}

// QuotedString returns `db`.`table`, safe to splice into SQL.
func (t TableName) QuotedString() string {
	return QuoteIdentifier(t.Database) + "." + QuoteIdentifier(t.Table)
}

// SplitIdentifiers splits a dotted name of one or more identifiers, each
// optionally backtick-quoted (a doubled backtick inside quotes stands for
// one), and validates each part as the server would: the one parser of
// such names, for --outbox-table and the outbox library alike.
func SplitIdentifiers(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty name; want database.table, e.g. app.outbox")
	}
	var parts []string
	for {
		var part string
		if strings.HasPrefix(s, "`") {
			var err error
			part, s, err = CutQuoted(s)
			if err != nil {
				return nil, err
			}
		} else {
			end := strings.IndexByte(s, '.')
			if end < 0 {
				end = len(s)
			}
			part, s = s[:end], s[end:]
			if i := strings.IndexFunc(part, func(r rune) bool { return r == '`' || unicode.IsSpace(r) }); i >= 0 {
				return nil, fmt.Errorf("unquoted name %q contains %q; quote it with backticks", part, part[i:i+1])
			}
		}
		if err := CheckIdentifier(part); err != nil {
			return nil, err
		}
		parts = append(parts, part)
		if s == "" {
			return parts, nil
		}
		if s[0] != '.' {
			return nil, fmt.Errorf("unexpected %q after `%s`; want a dot between database and table", s, part)
		}
		s = s[1:]
	}
}

// CutQuoted reads one backtick-quoted identifier from the start of s (its
// first byte is the opening backtick) and returns it unquoted, a doubled
// backtick read as one, along with the rest of s.
func CutQuoted(s string) (ident, rest string, err error) {
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

// CheckIdentifier rejects a database, table or column name the server
// would reject, so the mistake is reported at startup rather than as a
// missing table or a failed INSERT.
func CheckIdentifier(name string) error {
	switch {
	case name == "":
		return errors.New("empty name; want database.table, e.g. app.outbox")
	case !utf8.ValidString(name):
		return fmt.Errorf("name %q is not valid UTF-8", name)
	case strings.ContainsRune(name, 0):
		return fmt.Errorf("name %q contains a NUL character", name)
	case utf8.RuneCountInString(name) > maxIdentifierLength:
		return fmt.Errorf("name %q is longer than %d characters", name, maxIdentifierLength)
	case strings.HasSuffix(name, " "):
		return fmt.Errorf("name %q ends with a space, which the server does not allow", name)
	}
	return nil
}

// QuoteIdentifier quotes name with backticks, doubling any backtick in
// it, for SQL.
func QuoteIdentifier(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// maybeQuote quotes name only if an unquoted ParseTableName part could not
// hold it.
func maybeQuote(name string) string {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r == '.' || r == '`' || unicode.IsSpace(r) }) {
		return QuoteIdentifier(name)
	}
	return name
}

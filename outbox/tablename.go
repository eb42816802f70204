package outbox

import (
	"errors"
	"strings"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// quoteTable parses "table" or "db.table" (either part may be quoted with
// backticks, a doubled backtick inside quotes standing for one backtick, as
// the router's --outbox-table takes it, with the router's own parser) and
// returns it quoted for SQL: `table` or `db`.`table`.
func quoteTable(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", errors.New("empty table name; want table or database.table, e.g. outbox or app.outbox")
	}
	parts, err := schema.SplitIdentifiers(name)
	if err != nil {
		return "", err
	}
	if len(parts) > 2 {
		return "", errors.New("more than two parts; want table or database.table")
	}
	for i, p := range parts {
		parts[i] = schema.QuoteIdentifier(p)
	}
	return strings.Join(parts, "."), nil
}

package schema

import (
	"fmt"
	"strings"
)

// Flavors accepted by DDL.
const (
	FlavorMySQL   = "mysql"
	FlavorMariaDB = "mariadb"
)

// SurrogateKey is the auto-increment primary key column that DDL adds when
// the event id column is not itself called "id".
//
// Why a surrogate key: InnoDB clusters rows by primary key, so an
// ever-increasing BIGINT keeps inserts appending to the end of the table,
// where a random UUID primary key would scatter them across pages. The event
// id stays unique through a secondary UNIQUE key.
const SurrogateKey = "id"

// tableOptions is the same for both flavors. utf8mb4_unicode_ci rather than
// MySQL 8's default utf8mb4_0900_ai_ci because it exists on MySQL 5.7, 8.x
// and every MariaDB, so one statement works everywhere and a table can be
// moved between flavors. The collation only affects comparisons and sorting
// on the server; the router reads the stored bytes either way.
const tableOptions = "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"

// DDL returns the CREATE TABLE statement for an outbox table with columns c,
// for flavor "mysql" or "mariadb". table is "table" or "db.table", with
// backticks allowed as in ParseTableName; identifiers in the statement are
// quoted with backticks. Every non-empty optional column of c becomes a real
// NULL column; an empty one is left out.
//
// The primary key is SurrogateKey unless c.EventID is that name (as in the
// debezium preset), in which case the event id is the primary key. Another
// field may not use the surrogate key's name.
//
// JSON columns are JSON on MySQL, stored in the binlog as binary JSON. On
// MariaDB they are spelled LONGTEXT CHECK (JSON_VALID(col)), which is what
// MariaDB's JSON alias means anyway: saying it shows that the binlog carries
// plain text.
func DDL(flavor, table string, c Columns) (string, error) {
	if flavor != FlavorMySQL && flavor != FlavorMariaDB {
		return "", fmt.Errorf("outbox DDL: unknown flavor %q; use %s or %s", flavor, FlavorMySQL, FlavorMariaDB)
	}
	parts, err := SplitIdentifiers(table)
	if err != nil {
		return "", fmt.Errorf("outbox DDL: table name %q: %w", table, err)
	}
	if len(parts) > 2 {
		return "", fmt.Errorf("outbox DDL: table name %q has more than two parts; want table or database.table", table)
	}
	if err := c.Validate(); err != nil {
		return "", fmt.Errorf("outbox DDL: %w", err)
	}
	eventIDIsKey := strings.EqualFold(c.EventID, SurrogateKey)
	for _, f := range fields {
		if p := f.name(&c); p != &c.EventID && strings.EqualFold(*p, SurrogateKey) {
			return "", fmt.Errorf("outbox DDL: column %q of the %s is the name of the generated primary key; set %s to another name",
				*p, f.label, f.flag)
		}
	}

	quoted := make([]string, len(parts))
	for i, p := range parts {
		quoted[i] = QuoteIdentifier(p)
	}

	var lines []string
	if !eventIDIsKey {
		lines = append(lines, QuoteIdentifier(SurrogateKey)+" BIGINT UNSIGNED NOT NULL AUTO_INCREMENT")
	}
	for _, f := range fields {
		name := *f.name(&c)
		if name == "" {
			continue
		}
		lines = append(lines, QuoteIdentifier(name)+" "+columnType(flavor, f, name))
	}
	if eventIDIsKey {
		lines = append(lines, "PRIMARY KEY ("+QuoteIdentifier(c.EventID)+")")
	} else {
		lines = append(lines,
			"PRIMARY KEY ("+QuoteIdentifier(SurrogateKey)+")",
			"UNIQUE KEY "+QuoteIdentifier(c.EventID)+" ("+QuoteIdentifier(c.EventID)+")")
	}

	var b strings.Builder
	b.WriteString("CREATE TABLE " + strings.Join(quoted, ".") + " (\n  ")
	b.WriteString(strings.Join(lines, ",\n  "))
	b.WriteString("\n) " + tableOptions + ";\n")
	return b.String(), nil
}

// columnType returns the type and attributes of field f's column.
func columnType(flavor string, f field, name string) string {
	if f.json && flavor == FlavorMariaDB {
		return "LONGTEXT NULL CHECK (JSON_VALID(" + QuoteIdentifier(name) + "))"
	}
	return f.sqlType
}

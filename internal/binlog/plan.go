package binlog

import (
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// valueOptions is what the reader knows beyond the binlog about values.
type valueOptions struct {
	flavor gtid.Flavor
	uuid   UUIDBinary     // byte order of binary event ids; "" is UUIDStandard
	zone   *time.Location // time zone of DATETIME values; nil: not known
	noZone string         // why zone is nil
	// checkJSON: check payloads for JSON (Config.CheckPayloadJSON).
	checkJSON bool
}

// valueConvs returns the conversions of the mapped columns of tm, and the
// time zone of a DATETIME created_at (nil for other types). The facts
// come from the TABLE_MAP's metadata when the server logs them
// (binlog_row_metadata MINIMAL or FULL: character sets, signs) and
// otherwise from defs, the tracked definition (nil when the columns were
// named by FULL metadata or a ColumnSource). A mapped column of a type the
// router does not publish, or whose character set is not known or cannot
// be converted, or a DATETIME created_at without a known time zone, is an
// error naming the column.
func valueConvs(tm *replication.TableMapEvent, l schema.Layout, names []string, defs []schema.ColumnDef, opts valueOptions) ([]valueConv, *time.Location, error) {
	collations := tm.CollationMap()
	signs := len(tm.SignednessBitmap) > 0
	var convs []valueConv
	var zone *time.Location
	for f, ord := range layoutColumns(&l) {
		i := *ord
		if i < 0 || i >= len(tm.ColumnType) || i >= len(tm.ColumnMeta) {
			continue
		}
		var def *schema.ColumnDef
		if i < len(defs) {
			def = &defs[i]
		}
		tp, meta := realType(tm.ColumnType[i], tm.ColumnMeta[i])
		vc := valueConv{field: f, column: columnName(names, i)}
		what := fmt.Sprintf("column %s (the %s)", vc.column, fieldLabels[f])
		if f == fieldCreatedAt {
			switch tp {
			case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2, mysql.MYSQL_TYPE_LONGLONG:
			case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
				if opts.zone == nil {
					return nil, nil, fmt.Errorf("%s is a DATETIME, a wall-clock time without a time zone, and the server's time zone is not known (%s); set --datetime-zone to the zone the application writes it in (an IANA name like Europe/Berlin, or an offset like +05:00)", what, opts.noZone)
				}
				zone = opts.zone
			default:
				return nil, nil, fmt.Errorf("%s is of type %s; the record timestamp comes from a TIMESTAMP, a DATETIME or a BIGINT of epoch milliseconds: change its type, or set --column-created-at to a column name the table does not have, to take the commit time", what, typeName(tp))
			}
			continue
		}
		switch {
		case isInteger(tp):
			if !signs {
				sign := ""
				if def != nil {
					sign = def.Sign
				}
				if sign != schema.Signed {
					vc.bits, vc.sign = integerBits(tp), sign
					convs = append(convs, vc)
				}
			}
			continue
		case tp == mysql.MYSQL_TYPE_NEWDECIMAL:
			continue // its digits, as go-mysql decodes them
		case tp == mysql.MYSQL_TYPE_JSON:
			// MySQL's binary JSON: go-mysql renders it, the conversion
			// spells it as SELECT prints it.
			vc.json = true
			convs = append(convs, vc)
			continue
		case !isText(tp):
			return nil, nil, fmt.Errorf("%s is of type %s, which the router does not publish: outbox columns are text, binary strings, integers, DECIMAL or JSON", what, typeName(tp))
		}
		cs, err := columnCharset(i, collations, def, opts.flavor)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", what, err)
		}
		vc.charset = cs
		switch {
		case cs == "binary":
			if tp == mysql.MYSQL_TYPE_STRING {
				vc.padTo = int(meta)
			}
			if f == fieldEventID {
				vc.uuid = opts.uuid
				if vc.uuid == "" || def != nil && def.DataType == "uuid" {
					vc.uuid = UUIDStandard // MariaDB logs its UUID type in text order
				}
			}
		case isUTF8Charset(cs):
			vc.check = true
		default:
			dec, ok := decoderFor(cs)
			if !ok {
				return nil, nil, fmt.Errorf("%s has character set %s, which the router cannot convert to UTF-8; convert the column to utf8mb4 (ALTER TABLE ... MODIFY %s ... CHARACTER SET utf8mb4)", what, cs, vc.column)
			}
			vc.decode = dec
		}
		convs = append(convs, vc)
	}
	return convs, zone, nil
}

// columnCharset is the character set of text column i: from the
// TABLE_MAP's collation when it has one, else from the tracked
// definition. Both known and different is an error: the definition does
// not describe the row.
func columnCharset(i int, collations map[int]uint64, def *schema.ColumnDef, flavor gtid.Flavor) (string, error) {
	tracked := ""
	if def != nil {
		tracked = def.Charset
		if def.DataType == "uuid" {
			tracked = "binary"
		}
	}
	coll, logged := collations[i]
	if !logged {
		if tracked == "" {
			why := "the binlog carries no character sets (binlog_row_metadata is NO_LOG)"
			if def != nil {
				why += " and the tracked definition has none for it (it was stored by an earlier version, or the column was defined without one while the table's default was not known)"
			}
			return "", fmt.Errorf("its character set is not known: %s; set binlog_row_metadata=MINIMAL or FULL on the server", why)
		}
		return tracked, nil
	}
	if coll == 0 {
		// No collation has id 0 (MySQL's and MariaDB's ids start at 1):
		// the table map itself is wrong, and no setting or column
		// definition changes that.
		return "", fmt.Errorf("the TABLE_MAP event gives it collation id 0, which no column has: the table map is malformed (a server bug or a damaged binlog), and this is not a setting or a column definition to change; look at the event with mysqlbinlog --verbose and report it with the server's version")
	}
	cs, ok := charsetOf(flavor, coll)
	if !ok {
		return "", fmt.Errorf("its collation id %d is not one the router knows for %s; convert the column to utf8mb4", coll, flavor)
	}
	if tracked != "" && tracked != cs {
		return "", fmt.Errorf("the row has character set %s, the tracked definition %s", cs, tracked)
	}
	return cs, nil
}

// integerBits is the width of an integer column type.
func integerBits(tp byte) int {
	switch tp {
	case mysql.MYSQL_TYPE_TINY:
		return 8
	case mysql.MYSQL_TYPE_SHORT:
		return 16
	case mysql.MYSQL_TYPE_INT24:
		return 24
	case mysql.MYSQL_TYPE_LONG:
		return 32
	}
	return 64
}

// typeName names a binlog column type for messages.
func typeName(tp byte) string {
	switch tp {
	case mysql.MYSQL_TYPE_FLOAT:
		return "FLOAT"
	case mysql.MYSQL_TYPE_DOUBLE:
		return "DOUBLE"
	case mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL:
		return "DECIMAL"
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return "DATE"
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return "TIME"
	case mysql.MYSQL_TYPE_YEAR:
		return "YEAR"
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		return "DATETIME"
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return "TIMESTAMP"
	case mysql.MYSQL_TYPE_ENUM:
		return "ENUM"
	case mysql.MYSQL_TYPE_SET:
		return "SET"
	case mysql.MYSQL_TYPE_BIT:
		return "BIT"
	case mysql.MYSQL_TYPE_GEOMETRY:
		return "GEOMETRY"
	case mysql.MYSQL_TYPE_JSON:
		return "JSON"
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		return "VARCHAR"
	case mysql.MYSQL_TYPE_STRING:
		return "CHAR"
	case mysql.MYSQL_TYPE_BLOB:
		return "TEXT or BLOB"
	}
	if isInteger(tp) {
		return "integer"
	}
	return fmt.Sprintf("column of binlog type %d", tp)
}

// fieldLabels name the outbox fields in messages, as schema does.
var fieldLabels = map[rowField]string{fieldEventID: "event id", fieldAggregateType: "aggregate type",
	fieldAggregateID: "aggregate id", fieldEventType: "event type", fieldPayload: "payload",
	fieldCreatedAt: "creation time", fieldSchemaVersion: "schema version", fieldTraceparent: "traceparent",
	fieldHeaders: "headers"}

func columnName(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("#%d", i+1)
}

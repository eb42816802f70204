package binlog

import (
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// UUIDBinary says how the 16 bytes of a binary event id column hold a UUID.
type UUIDBinary string

const (
	// UUIDStandard: the bytes in the UUID's text order (UUID_TO_BIN(x),
	// MariaDB's UUID type as it is logged).
	UUIDStandard UUIDBinary = "standard"
	// UUIDSwapped: MySQL's UUID_TO_BIN(x, 1), time-high and time-low
	// groups swapped.
	UUIDSwapped UUIDBinary = "swapped"
)

// binaryCollation is the collation id of the binary character set.
const binaryCollation = 63

// valueConv turns the stored bytes of one mapped column into what SELECT
// prints for it. It is applied after either decoder (the row codec or
// go-mysql's), so both hand over the same values.
type valueConv struct {
	field   rowField
	column  string
	padTo   int               // BINARY(n): restore the trailing 0x00 bytes the binlog strips
	uuid    UUIDBinary        // a 16-byte binary event id becomes UUID text in this byte order
	decoder encoding.Encoding // a text column in a charset other than UTF-8
	check   bool              // utf8/utf8mb4/ascii text: the bytes must be valid UTF-8 already
	charset string
}

// valueConvs returns the conversions of the mapped columns of tm. Column
// charsets are known only from FULL metadata (their collation ids); without
// it text is taken as UTF-8 and binary columns are not padded. An unknown
// or unconvertible charset is an error naming the column and the charset.
func valueConvs(tm *replication.TableMapEvent, l schema.Layout, names []string, uuidOrder UUIDBinary) ([]valueConv, error) {
	collations := tm.CollationMap()
	var convs []valueConv
	for f, ord := range layoutColumns(&l) {
		i := *ord
		if i < 0 || i >= len(tm.ColumnType) || i >= len(tm.ColumnMeta) || f == fieldCreatedAt {
			continue
		}
		tp, meta := realType(tm.ColumnType[i], tm.ColumnMeta[i])
		if !isText(tp) {
			continue
		}
		coll, known := collations[i]
		if !known {
			continue
		}
		vc := valueConv{field: f, column: columnName(names, i)}
		if coll == binaryCollation {
			if tp == gomysql.MYSQL_TYPE_STRING {
				vc.padTo = int(meta)
			}
			if f == fieldEventID {
				vc.uuid = uuidOrder
			}
			convs = append(convs, vc)
			continue
		}
		cs, err := charsetOf(coll)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", vc.column, err)
		}
		vc.charset = cs
		switch cs {
		case "utf8", "utf8mb3", "utf8mb4", "ascii":
			vc.check = true
		default:
			enc, ok := encodings[cs]
			if !ok {
				return nil, fmt.Errorf("column %s has character set %s, which the router cannot convert to UTF-8; convert the column to utf8mb4 (ALTER TABLE ... MODIFY %s ... CHARACTER SET utf8mb4)",
					vc.column, cs, vc.column)
			}
			vc.decoder = enc
		}
		convs = append(convs, vc)
	}
	return convs, nil
}

func columnName(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("#%d", i+1)
}

// charsetOf names the character set of collation id coll. Ids below 256
// are the same on MySQL and MariaDB.
func charsetOf(coll uint64) (string, error) {
	if coll < 256 {
		if c, err := charset.GetCollationByID(int(coll)); err == nil {
			return c.CharsetName, nil
		}
	}
	return "", fmt.Errorf("collation id %d is unknown to the router; convert the column to utf8mb4", coll)
}

// encodings are the server character sets converted to UTF-8. MySQL's
// latin1 is Windows-1252; ucs2 is UTF-16 restricted to the BMP.
var encodings = map[string]encoding.Encoding{
	"latin1":   charmap.Windows1252,
	"latin2":   charmap.ISO8859_2,
	"latin5":   charmap.ISO8859_9,
	"latin7":   charmap.ISO8859_13,
	"greek":    charmap.ISO8859_7,
	"hebrew":   charmap.ISO8859_8,
	"cp1250":   charmap.Windows1250,
	"cp1251":   charmap.Windows1251,
	"cp1256":   charmap.Windows1256,
	"cp1257":   charmap.Windows1257,
	"cp850":    charmap.CodePage850,
	"cp852":    charmap.CodePage852,
	"cp866":    charmap.CodePage866,
	"koi8r":    charmap.KOI8R,
	"koi8u":    charmap.KOI8U,
	"macroman": charmap.Macintosh,
	"utf16":    unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
	"utf16le":  unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM),
	"ucs2":     unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM),
}

// convert applies the table's conversions to r's mapped columns.
func (t *table) convert(r *OutboxRow) error {
	for i := range t.convs {
		vc := &t.convs[i]
		p := fieldBytes(r, vc.field)
		if p == nil || *p == nil {
			continue
		}
		v, err := vc.apply(*p)
		if err != nil {
			return err
		}
		*p = v
	}
	return nil
}

func (vc *valueConv) apply(v []byte) ([]byte, error) {
	if vc.padTo > len(v) {
		v = append(append(make([]byte, 0, vc.padTo), v...), make([]byte, vc.padTo-len(v))...)
	}
	switch {
	case vc.uuid != "" && len(v) == 16:
		return uuidText(v, vc.uuid), nil
	case vc.check:
		if !utf8.Valid(v) {
			return nil, fmt.Errorf("column %s (%s) holds bytes that are not valid UTF-8: 0x%s", vc.column, vc.charset, hex.EncodeToString(v[:min(len(v), 32)]))
		}
	case vc.decoder != nil:
		out, err := vc.decoder.NewDecoder().Bytes(v)
		if err != nil {
			return nil, fmt.Errorf("column %s: converting %s to UTF-8: %w", vc.column, vc.charset, err)
		}
		return out, nil
	}
	return v, nil
}

// uuidText formats 16 bytes as a canonical UUID.
func uuidText(b []byte, order UUIDBinary) []byte {
	u := b
	if order == UUIDSwapped {
		// UUID_TO_BIN(x, 1) stores time-high, time-mid, time-low, then
		// the rest: put them back in text order.
		u = make([]byte, 16)
		copy(u[0:4], b[4:8])
		copy(u[4:6], b[2:4])
		copy(u[6:8], b[0:2])
		copy(u[8:], b[8:])
	}
	out := make([]byte, 36)
	hex.Encode(out[0:8], u[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], u[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], u[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], u[8:10])
	out[23] = '-'
	hex.Encode(out[24:], u[10:])
	return out
}

// fieldBytes points at the byte field f of r; nil for created_at.
func fieldBytes(r *OutboxRow, f rowField) *[]byte {
	switch f {
	case fieldEventID:
		return &r.EventID
	case fieldAggregateType:
		return &r.AggregateType
	case fieldAggregateID:
		return &r.AggregateID
	case fieldEventType:
		return &r.EventType
	case fieldPayload:
		return &r.Payload
	case fieldSchemaVersion:
		return &r.SchemaVersion
	case fieldTraceparent:
		return &r.Traceparent
	case fieldHeaders:
		return &r.Headers
	}
	return nil
}

package binlog

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/binlog-router/binlog-router/internal/jsonscan"
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

// valueConv turns the stored bytes of one mapped column into what SELECT
// prints for it. It is applied after either decoder (the row codec or
// go-mysql's), so both hand over the same values.
type valueConv struct {
	field   rowField
	column  string
	padTo   int         // BINARY(n): restore the trailing 0x00 bytes the binlog strips
	uuid    UUIDBinary  // a 16-byte binary event id becomes UUID text in this byte order
	decode  textDecoder // a text column in a character set other than UTF-8
	check   bool        // utf8mb3/utf8mb4/ascii text: the bytes must be valid UTF-8 already
	charset string
	json    bool // MySQL's binary JSON, rendered by go-mysql: spelled as MySQL's SELECT prints it
	// An integer column of bits bits whose sign the TABLE_MAP does not
	// carry: both decoders read it as signed. sign is schema.Unsigned
	// when the definition says UNSIGNED (a negative reading is read again
	// as unsigned), "" when not known (a negative reading is an error:
	// the two readings differ).
	bits int
	sign string
}

// convert applies the table's conversions to r's mapped columns and,
// when the table checks payloads for JSON, sets r.PayloadJSON. A UTF-8
// payload that is JSON needs no UTF-8 check of its own: JSON in UTF-8 is
// what jsonscan.Valid checks, in the same pass.
func (t *table) convert(r *OutboxRow) error {
	checked := false
	for i := range t.convs {
		vc := &t.convs[i]
		p := fieldBytes(r, vc.field)
		if p == nil || *p == nil {
			continue
		}
		if vc.field == fieldPayload && vc.check && t.checkJSON {
			checked = true
			if r.PayloadJSON = jsonscan.Valid(*p); r.PayloadJSON {
				continue
			}
		}
		v, err := vc.apply(*p)
		if err != nil {
			return err
		}
		*p = v
	}
	if t.checkJSON && !checked && r.Payload != nil {
		r.PayloadJSON = jsonscan.Valid(r.Payload)
	}
	return nil
}

func (vc *valueConv) apply(v []byte) ([]byte, error) {
	if vc.bits > 0 {
		return vc.integer(v)
	}
	if vc.json {
		return mysqlJSONText(v), nil
	}
	if vc.padTo > len(v) {
		v = append(append(make([]byte, 0, vc.padTo), v...), make([]byte, vc.padTo-len(v))...)
	}
	switch {
	case vc.uuid != "" && len(v) == 16:
		return uuidText(v, vc.uuid), nil
	case vc.check:
		if !utf8.Valid(v) {
			return nil, fmt.Errorf("column %s (%s) holds bytes that are not valid UTF-8: %s", vc.column, vc.charset, Readable(v))
		}
	case vc.decode != nil:
		out, err := vc.decode(make([]byte, 0, len(v)+len(v)/2), v)
		if err != nil {
			return nil, fmt.Errorf("column %s: converting %s to UTF-8: %w", vc.column, vc.charset, err)
		}
		return out, nil
	}
	return v, nil
}

// integer reads a signed reading of an integer column again as unsigned
// when the column is UNSIGNED; with the sign not known, a negative
// reading is an error (as unsigned it would be another number).
func (vc *valueConv) integer(v []byte) ([]byte, error) {
	if len(v) == 0 || v[0] != '-' {
		return v, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", vc.column, err)
	}
	u := uint64(n)
	if vc.bits < 64 {
		u &= 1<<vc.bits - 1
	}
	if vc.sign != schema.Unsigned {
		return nil, fmt.Errorf("column %s is an integer whose sign is not known (the binlog carries none, binlog_row_metadata being NO_LOG, and the tracked definition, stored by an earlier version, has none): its value is %s if SIGNED and %d if UNSIGNED; set binlog_row_metadata=MINIMAL or FULL on the server", vc.column, v, u)
	}
	return strconv.AppendUint(nil, u, 10), nil
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

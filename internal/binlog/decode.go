package binlog

import (
	"fmt"
	"strconv"
	"time"
	"unsafe"
)

// empty is the non-nil empty value: an empty string, as opposed to NULL.
var empty = []byte{}

// rowFromValues maps one decoded row image to an OutboxRow. values are
// go-mysql's decoded column values; strings and blobs alias the binlog
// packet, and so do the returned slices.
func rowFromValues(t *table, values []any, dst *OutboxRow) {
	l := &t.layout
	rowIdentity(t, dst)
	dst.EventID = column(values, l.EventID)
	dst.AggregateType = column(values, l.AggregateType)
	dst.AggregateID = column(values, l.AggregateID)
	dst.EventType = column(values, l.EventType)
	dst.Payload = column(values, l.Payload)
	dst.SchemaVersion = column(values, l.SchemaVersion)
	dst.Traceparent = column(values, l.Traceparent)
	dst.Headers = column(values, l.Headers)
	dst.CreatedAt = timeColumn(values, l.CreatedAt)
	if z := t.zone; z != nil && !dst.CreatedAt.IsZero() {
		// go-mysql gives a DATETIME's wall clock in UTC; it is a time in
		// zone z.
		c := dst.CreatedAt
		dst.CreatedAt = time.Date(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), z)
	}
}

// rowIdentity sets the row's table and what the table says of its values.
func rowIdentity(t *table, dst *OutboxRow) {
	dst.Database, dst.Table, dst.PayloadBinary = t.db, t.tbl, t.payloadBinary
}

// column returns the value at index i as bytes; nil for NULL or i < 0.
func column(values []any, i int) []byte {
	if i < 0 || i >= len(values) {
		return nil
	}
	return asBytes(values[i])
}

func asBytes(v any) []byte {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		if x == nil {
			return empty
		}
		return x
	case string:
		if len(x) == 0 {
			return empty
		}
		// go-mysql's strings are themselves views of the packet and are
		// never mutated, so viewing them as bytes is safe.
		return unsafe.Slice(unsafe.StringData(x), len(x))
	case int8:
		return strconv.AppendInt(nil, int64(x), 10)
	case int16:
		return strconv.AppendInt(nil, int64(x), 10)
	case int32:
		return strconv.AppendInt(nil, int64(x), 10)
	case int64:
		return strconv.AppendInt(nil, x, 10)
	case int:
		return strconv.AppendInt(nil, int64(x), 10)
	case uint8:
		return strconv.AppendUint(nil, uint64(x), 10)
	case uint16:
		return strconv.AppendUint(nil, uint64(x), 10)
	case uint32:
		return strconv.AppendUint(nil, uint64(x), 10)
	case uint64:
		return strconv.AppendUint(nil, x, 10)
	case float32:
		return strconv.AppendFloat(nil, float64(x), 'g', -1, 32)
	case float64:
		return strconv.AppendFloat(nil, x, 'g', -1, 64)
	case time.Time:
		return x.AppendFormat(nil, time.RFC3339Nano)
	case fmt.Stringer:
		return []byte(x.String())
	default:
		return fmt.Append(nil, x)
	}
}

func timeColumn(values []any, i int) time.Time {
	if i < 0 || i >= len(values) {
		return time.Time{}
	}
	switch x := values[i].(type) {
	case time.Time:
		return x
	case int64: // a BIGINT column of epoch milliseconds
		return time.UnixMilli(x)
	case uint64:
		return time.UnixMilli(int64(x))
	case string:
		// go-mysql renders zero dates as strings; they are no time.
		t, err := time.Parse("2006-01-02 15:04:05.999999", x)
		if err != nil {
			return time.Time{}
		}
		return t
	}
	return time.Time{}
}

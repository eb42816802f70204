package binlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// rowCodec decodes the row images of one outbox table's INSERT events
// straight into OutboxRows: mapped columns become views of the packet,
// the others are only sized. It costs no allocation per row, where
// go-mysql's decoder builds a []any, a map of signedness and boxed values
// for every row. It gives the same OutboxRow as rowFromValues applied to
// go-mysql's values (rowcodec_test.go checks this on real binlogs); a
// table with a column type it does not know, or a mapped column of a type
// it does not convert, is left to go-mysql (usable is false).
type rowCodec struct {
	usable bool
	cols   []colCodec

	// what the codec was built from, to tell whether a new TABLE_MAP
	// event of the same table needs a new codec
	types, signedness []byte
	metas             []uint16
	layout            schema.Layout
	zone              *time.Location
}

type colCodec struct {
	tp       byte   // real type: MYSQL_TYPE_STRING resolved to ENUM or SET
	meta     uint16 // type metadata; for STRING its declared length
	field    rowField
	unsigned bool
	zone     *time.Location // a DATETIME created_at's time zone; nil is UTC
}

type rowField uint8

const (
	fieldNone rowField = iota
	fieldEventID
	fieldAggregateType
	fieldAggregateID
	fieldEventType
	fieldPayload
	fieldSchemaVersion
	fieldTraceparent
	fieldHeaders
	fieldCreatedAt
)

// layoutColumns points at the column ordinal of each field in l.
func layoutColumns(l *schema.Layout) map[rowField]*int {
	return map[rowField]*int{fieldEventID: &l.EventID, fieldAggregateType: &l.AggregateType,
		fieldAggregateID: &l.AggregateID, fieldEventType: &l.EventType, fieldPayload: &l.Payload,
		fieldSchemaVersion: &l.SchemaVersion, fieldTraceparent: &l.Traceparent, fieldHeaders: &l.Headers,
		fieldCreatedAt: &l.CreatedAt}
}

var errRowTruncated = errors.New("row image is shorter than its columns")

// codecFor returns the table's codec for TABLE_MAP event tm, building it
// when the table's column types changed.
func (t *table) codecFor(tm *replication.TableMapEvent) *rowCodec {
	c := t.codec
	if c == nil || !bytes.Equal(c.types, tm.ColumnType) || !bytes.Equal(c.signedness, tm.SignednessBitmap) ||
		!equalMetas(c.metas, tm.ColumnMeta) || c.layout != t.layout || c.zone != t.zone {
		c = newRowCodec(tm, t.layout, t.zone)
		t.codec = c
	}
	return c
}

func equalMetas(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// newRowCodec builds the codec of TABLE_MAP tm for layout l; zone is the
// time zone of a DATETIME created_at (nil: UTC).
func newRowCodec(tm *replication.TableMapEvent, l schema.Layout, zone *time.Location) *rowCodec {
	c := &rowCodec{
		usable:     len(tm.ColumnMeta) == len(tm.ColumnType) && len(tm.ColumnType) == l.NumColumns,
		cols:       make([]colCodec, len(tm.ColumnType)),
		types:      bytes.Clone(tm.ColumnType),
		signedness: bytes.Clone(tm.SignednessBitmap),
		metas:      append([]uint16(nil), tm.ColumnMeta...),
		layout:     l,
		zone:       zone,
	}
	if !c.usable {
		return c
	}
	for f, i := range layoutColumns(&l) {
		if *i >= 0 && *i < len(c.cols) {
			c.cols[*i].field = f
		}
	}
	if l.CreatedAt >= 0 && l.CreatedAt < len(c.cols) {
		c.cols[l.CreatedAt].zone = zone
	}
	numeric := 0 // go-mysql's UnsignedMap: the n-th numeric column has the n-th bit
	for i := range c.cols {
		col := &c.cols[i]
		col.tp, col.meta = realType(tm.ColumnType[i], tm.ColumnMeta[i])
		if isNumeric(col.tp) {
			if b := numeric / 8; b < len(tm.SignednessBitmap) {
				col.unsigned = tm.SignednessBitmap[b]&(0x80>>(numeric%8)) != 0
			}
			numeric++
		}
		if !col.supported() {
			c.usable = false
		}
	}
	return c
}

// realType resolves a MYSQL_TYPE_STRING column to its real type as
// go-mysql's decodeValue does; meta becomes the declared length of a
// STRING and stays as it is for ENUM and SET.
func realType(tp byte, meta uint16) (byte, uint16) {
	if tp != gomysql.MYSQL_TYPE_STRING || meta < 256 {
		return tp, meta
	}
	b0, b1 := uint8(meta>>8), uint8(meta&0xFF)
	if b0&0x30 != 0x30 {
		return b0 | 0x30, uint16(b1) | uint16((b0&0x30)^0x30)<<4
	}
	if b0 == gomysql.MYSQL_TYPE_STRING {
		return b0, uint16(b1)
	}
	return b0, meta
}

func isNumeric(tp byte) bool {
	switch tp {
	case gomysql.MYSQL_TYPE_TINY, gomysql.MYSQL_TYPE_SHORT, gomysql.MYSQL_TYPE_INT24, gomysql.MYSQL_TYPE_LONG,
		gomysql.MYSQL_TYPE_LONGLONG, gomysql.MYSQL_TYPE_DECIMAL, gomysql.MYSQL_TYPE_NEWDECIMAL,
		gomysql.MYSQL_TYPE_FLOAT, gomysql.MYSQL_TYPE_DOUBLE, gomysql.MYSQL_TYPE_YEAR:
		return true
	}
	return false
}

func isInteger(tp byte) bool {
	switch tp {
	case gomysql.MYSQL_TYPE_TINY, gomysql.MYSQL_TYPE_SHORT, gomysql.MYSQL_TYPE_INT24, gomysql.MYSQL_TYPE_LONG,
		gomysql.MYSQL_TYPE_LONGLONG:
		return true
	}
	return false
}

func isText(tp byte) bool {
	switch tp {
	case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_STRING, gomysql.MYSQL_TYPE_BLOB:
		return true
	}
	return false
}

// supported: the codec can size the column, and convert it if mapped.
func (col *colCodec) supported() bool {
	switch col.field {
	case fieldNone:
		_, ok := col.size([]byte{0, 0, 0, 0}) // a zero length prefix
		return ok
	case fieldCreatedAt:
		return col.tp == gomysql.MYSQL_TYPE_TIMESTAMP2 || col.tp == gomysql.MYSQL_TYPE_DATETIME2 ||
			col.tp == gomysql.MYSQL_TYPE_LONGLONG
	}
	switch {
	case isInteger(col.tp):
		return true
	case col.tp == gomysql.MYSQL_TYPE_BLOB:
		return col.meta >= 1 && col.meta <= 4
	default:
		return isText(col.tp)
	}
}

// size returns the length of the column's value, length prefix included,
// at the start of data; ok is false for a type it does not know. A value
// longer than data is for the caller to report.
func (col *colCodec) size(data []byte) (n int, ok bool) {
	fixed := func(k int) (int, bool) { return k, true }
	frac := int(col.meta+1) / 2
	switch col.tp {
	case gomysql.MYSQL_TYPE_NULL:
		return fixed(0)
	case gomysql.MYSQL_TYPE_TINY, gomysql.MYSQL_TYPE_YEAR:
		return fixed(1)
	case gomysql.MYSQL_TYPE_SHORT:
		return fixed(2)
	case gomysql.MYSQL_TYPE_INT24, gomysql.MYSQL_TYPE_DATE, gomysql.MYSQL_TYPE_TIME:
		return fixed(3)
	case gomysql.MYSQL_TYPE_LONG, gomysql.MYSQL_TYPE_FLOAT, gomysql.MYSQL_TYPE_TIMESTAMP:
		return fixed(4)
	case gomysql.MYSQL_TYPE_LONGLONG, gomysql.MYSQL_TYPE_DOUBLE, gomysql.MYSQL_TYPE_DATETIME:
		return fixed(8)
	case gomysql.MYSQL_TYPE_TIMESTAMP2:
		return fixed(4 + frac)
	case gomysql.MYSQL_TYPE_DATETIME2:
		return fixed(5 + frac)
	case gomysql.MYSQL_TYPE_TIME2:
		return fixed(3 + frac)
	case gomysql.MYSQL_TYPE_ENUM:
		if l := col.meta & 0xFF; l == 1 || l == 2 {
			return fixed(int(l))
		}
		return 0, false
	case gomysql.MYSQL_TYPE_SET:
		return fixed(int(col.meta & 0xFF))
	case gomysql.MYSQL_TYPE_BIT:
		nbits := int(col.meta>>8)*8 + int(col.meta&0xFF)
		return fixed((nbits + 7) / 8)
	case gomysql.MYSQL_TYPE_NEWDECIMAL:
		return fixed(decimalSize(int(col.meta>>8), int(col.meta&0xFF)))
	case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_STRING:
		if col.meta < 256 {
			if len(data) < 1 {
				return 1, true
			}
			return 1 + int(data[0]), true
		}
		if len(data) < 2 {
			return 2, true
		}
		return 2 + int(binary.LittleEndian.Uint16(data)), true
	case gomysql.MYSQL_TYPE_BLOB, gomysql.MYSQL_TYPE_JSON, gomysql.MYSQL_TYPE_GEOMETRY:
		k := int(col.meta)
		if k < 1 || k > 4 {
			return 0, false
		}
		if len(data) < k {
			return k, true
		}
		var l uint64
		for i := range k {
			l |= uint64(data[i]) << (8 * i)
		}
		return k + int(min(l, 1<<40)), true
	}
	return 0, false
}

// prefix is the length prefix of a text column's value.
func (col *colCodec) prefix() int {
	switch col.tp {
	case gomysql.MYSQL_TYPE_BLOB:
		return int(col.meta)
	case gomysql.MYSQL_TYPE_VARCHAR, gomysql.MYSQL_TYPE_VAR_STRING, gomysql.MYSQL_TYPE_STRING:
		if col.meta < 256 {
			return 1
		}
		return 2
	}
	return 0
}

// decimalSize is the binary size of DECIMAL(precision, scale).
func decimalSize(precision, scale int) int {
	compressed := [10]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}
	integral := precision - scale
	if integral < 0 || scale < 0 {
		return 0
	}
	return integral/9*4 + compressed[integral%9] + scale/9*4 + compressed[scale%9]
}

// row decodes the row image at the start of data into dst (whose
// Database, Table and Txn the caller sets) and returns its length.
// present is the event's bitmap of columns in the image.
func (c *rowCodec) row(data, present []byte, dst *OutboxRow) (int, error) {
	count := 0
	for i := range c.cols {
		if i/8 < len(present) && present[i/8]&(1<<(i%8)) != 0 {
			count++
		}
	}
	pos := (count + 7) / 8
	if pos > len(data) {
		return 0, errRowTruncated
	}
	nulls := data[:pos]
	seen := 0
	for i := range c.cols {
		if i/8 >= len(present) || present[i/8]&(1<<(i%8)) == 0 {
			continue
		}
		null := nulls[seen/8]&(1<<(seen%8)) != 0
		seen++
		if null {
			continue
		}
		col := &c.cols[i]
		n, ok := col.size(data[pos:])
		if !ok {
			return 0, errors.New("column type without a size")
		}
		if n > len(data)-pos {
			return 0, errRowTruncated
		}
		if col.field != fieldNone {
			col.set(data[pos:pos+n], dst)
		}
		pos += n
	}
	return pos, nil
}

// set converts the value v (with its length prefix) into its field of dst,
// as rowFromValues does with go-mysql's value.
func (col *colCodec) set(v []byte, dst *OutboxRow) {
	if col.field == fieldCreatedAt {
		dst.CreatedAt = col.time(v)
		return
	}
	var b []byte
	if isInteger(col.tp) {
		b = col.integerText(v)
	} else {
		b = v[col.prefix():len(v):len(v)]
	}
	switch col.field {
	case fieldEventID:
		dst.EventID = b
	case fieldAggregateType:
		dst.AggregateType = b
	case fieldAggregateID:
		dst.AggregateID = b
	case fieldEventType:
		dst.EventType = b
	case fieldPayload:
		dst.Payload = b
	case fieldSchemaVersion:
		dst.SchemaVersion = b
	case fieldTraceparent:
		dst.Traceparent = b
	case fieldHeaders:
		dst.Headers = b
	}
}

// integer is a little-endian integer column, sign-extended unless unsigned.
func (col *colCodec) integer(v []byte) (u uint64, neg bool) {
	for i := range v {
		u |= uint64(v[i]) << (8 * i)
	}
	if col.unsigned || len(v) == 8 {
		return u, !col.unsigned && int64(u) < 0
	}
	shift := 64 - 8*len(v)
	s := int64(u<<shift) >> shift
	return uint64(s), s < 0
}

func (col *colCodec) integerText(v []byte) []byte {
	u, neg := col.integer(v)
	if neg {
		return strconv.AppendInt(nil, int64(u), 10)
	}
	return strconv.AppendUint(nil, u, 10)
}

// time converts a created_at value as go-mysql (ParseTime) and timeColumn
// do together: zero and invalid dates give the zero time; a DATETIME is
// a wall-clock time in the column's zone.
func (col *colCodec) time(v []byte) time.Time {
	switch col.tp {
	case gomysql.MYSQL_TYPE_LONGLONG:
		u, _ := col.integer(v)
		return time.UnixMilli(int64(u))
	case gomysql.MYSQL_TYPE_TIMESTAMP2:
		sec := int64(binary.BigEndian.Uint32(v))
		if sec == 0 {
			return time.Time{}
		}
		return time.Unix(sec, fraction(v[4:], col.meta)*1000)
	case gomysql.MYSQL_TYPE_DATETIME2:
		var packed int64
		for _, b := range v[:5] {
			packed = packed<<8 | int64(b)
		}
		intPart := packed - 0x8000000000
		if intPart == 0 {
			return time.Time{}
		}
		frac := fraction(v[5:], col.meta)
		tmp := intPart<<24 + frac
		if tmp < 0 {
			tmp = -tmp
		}
		ymdhms := tmp >> 24
		ymd, hms := ymdhms>>17, ymdhms%(1<<17)
		day, month, year := int(ymd%(1<<5)), int((ymd>>5)%13), int((ymd>>5)/13)
		if month == 0 || day == 0 {
			return time.Time{}
		}
		zone := col.zone
		if zone == nil {
			zone = time.UTC
		}
		return time.Date(year, time.Month(month), day, int(hms>>12), int((hms>>6)%(1<<6)), int(hms%(1<<6)),
			int(frac*1000), zone)
	}
	return time.Time{}
}

// fraction is the microseconds of a TIMESTAMP2/DATETIME2/TIME2 value.
func fraction(v []byte, dec uint16) int64 {
	switch dec {
	case 1, 2:
		return int64(v[0]) * 10000
	case 3, 4:
		return int64(binary.BigEndian.Uint16(v)) * 100
	case 5, 6:
		return int64(v[0])<<16 | int64(v[1])<<8 | int64(v[2])
	}
	return 0
}

package recovery

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// ErrUnusableTable means an outbox table lacks what recovery needs: a
// primary key of one column, a creation time column for a time window,
// or mapped columns of types it reads.
var ErrUnusableTable = errors.New("outbox table cannot be recovered")

// column is one mapped column as recovery selects it.
type column struct {
	field    *[]byte // where the value goes in the row
	name     string
	dataType string // information_schema DATA_TYPE, lower case
}

// source is one outbox table as recovery reads it.
type source struct {
	name schema.TableName
	key  string // the one primary key column

	cols      []column
	payload   string // data type of the payload column
	eventUUID bool   // the event id column is BINARY(16)-like: 16 bytes become UUID text

	createdAt          string // creation time column; "" when not mapped
	createdAtType      string // timestamp or datetime
	createdAtPrecision int    // its fractional digits
	zone               *time.Location

	keyAutoIncrement bool  // the primary key column is AUTO_INCREMENT
	order            Order // OrderKey or OrderCreatedAt (planOrder); "" is OrderKey

	row   binlog.OutboxRow // the row scanned into
	first any              // the position (cursor.position) of the first row read; nil: none yet
}

// cursor is the last row a chunk read: where the next chunk starts.
type cursor struct {
	key         any       // its primary key, as the driver gives it
	created     time.Time // its creation time (created-at order)
	nullCreated bool      // its creation time is NULL (created-at order)
}

// textTypes are the data types whose SELECT value is what the binlog
// reader hands over for a mapped column (the connection's character set
// is utf8mb4: the server converts text as the reader does).
var textTypes = map[string]bool{
	"char": true, "varchar": true, "tinytext": true, "text": true, "mediumtext": true, "longtext": true,
	"json": true, "enum": true, "set": true, "uuid": true,
	"binary": true, "varbinary": true, "tinyblob": true, "blob": true, "mediumblob": true, "longblob": true,
	"tinyint": true, "smallint": true, "mediumint": true, "int": true, "bigint": true,
}

var binaryTypes = map[string]bool{"binary": true, "varbinary": true, "tinyblob": true, "blob": true, "mediumblob": true, "longblob": true}

// inspectTable reads the primary key and the mapped columns' types of
// table. zone is the time zone of a DATETIME creation time.
func inspectTable(ctx context.Context, db *sql.DB, table schema.TableName, cols schema.Columns, zone *time.Location, needCreatedAt bool) (*source, error) {
	s := &source{name: table, zone: zone}
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, table.Database, table.Table)
	if err != nil {
		return nil, fmt.Errorf("reading the primary key of %s: %w", table, err)
	}
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading the primary key of %s: %w", table, err)
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the primary key of %s: %w", table, err)
	}
	if len(keys) != 1 {
		return nil, fmt.Errorf("outbox table %s: %w: it has %d primary key columns; recovery reads the table in chunks by a primary key of one column: add one (an AUTO_INCREMENT id)", table, ErrUnusableTable, len(keys))
	}
	s.key = keys[0]
	types := map[string]string{}
	precision := map[string]int{}
	rows, err = db.QueryContext(ctx, `SELECT COLUMN_NAME, DATA_TYPE, EXTRA, COALESCE(DATETIME_PRECISION, 0) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, table.Database, table.Table)
	if err != nil {
		return nil, fmt.Errorf("reading the columns of %s: %w", table, err)
	}
	for rows.Next() {
		var n, t, extra string
		var prec int
		if err := rows.Scan(&n, &t, &extra, &prec); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading the columns of %s: %w", table, err)
		}
		types[strings.ToLower(n)] = strings.ToLower(t)
		precision[strings.ToLower(n)] = prec
		if strings.EqualFold(n, s.key) && strings.Contains(strings.ToLower(extra), "auto_increment") {
			s.keyAutoIncrement = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the columns of %s: %w", table, err)
	}
	if len(types) == 0 {
		return nil, fmt.Errorf("outbox table %s does not exist (or the user cannot see it); grant SELECT on it", table)
	}
	r := &s.row
	fields := []struct {
		name     string
		dst      *[]byte
		required bool
	}{
		{cols.EventID, &r.EventID, true}, {cols.AggregateType, &r.AggregateType, true}, {cols.AggregateID, &r.AggregateID, true},
		{cols.EventType, &r.EventType, true}, {cols.Payload, &r.Payload, true},
		{cols.SchemaVersion, &r.SchemaVersion, false}, {cols.Traceparent, &r.Traceparent, false}, {cols.Headers, &r.Headers, false},
	}
	for _, f := range fields {
		if f.name == "" {
			continue
		}
		t, ok := types[strings.ToLower(f.name)]
		if !ok {
			if f.required {
				return nil, fmt.Errorf("outbox table %s: %w: it has no column %q", table, ErrUnusableTable, f.name)
			}
			continue // an optional column the table does not have, as the router
		}
		if !textTypes[t] {
			return nil, fmt.Errorf("outbox table %s: %w: column %q is %s, a type recovery does not read", table, ErrUnusableTable, f.name, t)
		}
		s.cols = append(s.cols, column{field: f.dst, name: f.name, dataType: t})
		if f.dst == &r.Payload {
			s.payload = t
		}
		if f.dst == &r.EventID {
			s.eventUUID = t == "binary" || t == "varbinary"
		}
	}
	if cols.CreatedAt != "" {
		if t, ok := types[strings.ToLower(cols.CreatedAt)]; ok {
			if t != "timestamp" && t != "datetime" {
				return nil, fmt.Errorf("outbox table %s: %w: creation time column %q is %s; map a TIMESTAMP or DATETIME column with --column-created-at", table, ErrUnusableTable, cols.CreatedAt, t)
			}
			s.createdAt, s.createdAtType = cols.CreatedAt, t
			s.createdAtPrecision = precision[strings.ToLower(cols.CreatedAt)]
		}
	}
	if needCreatedAt && s.createdAt == "" {
		return nil, fmt.Errorf("outbox table %s: %w: no creation time column (--column-created-at %q) to compare with the window's start; map a TIMESTAMP or DATETIME column, or choose the rows with --where", table, ErrUnusableTable, cols.CreatedAt)
	}
	if s.createdAtType == "datetime" && s.zone == nil {
		return nil, fmt.Errorf("outbox table %s: creation time column %q is a DATETIME and its time zone is not known; set --datetime-zone", table, s.createdAt)
	}
	return s, nil
}

// timeSQL is the expression and argument that compare the creation time
// column with t.
func (s *source) timeSQL(t time.Time) (string, any) {
	if s.createdAtType == "datetime" {
		return "?", t.In(s.zone).Format("2006-01-02 15:04:05.999999")
	}
	// FROM_UNIXTIME gives the session's time zone, in which the server
	// also shows TIMESTAMP values: the comparison is exact.
	return "FROM_UNIXTIME(?)", strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', 6, 64)
}

// window is the condition of the rows recovered: created at or after
// since (when not zero) and where (when not "").
func (s *source) window(since time.Time, where string) (string, []any) {
	var conds []string
	var args []any
	if !since.IsZero() {
		expr, arg := s.timeSQL(since)
		conds = append(conds, schema.QuoteIdentifier(s.createdAt)+" >= "+expr)
		args = append(args, arg)
	}
	if where != "" {
		conds = append(conds, "("+where+")")
	}
	if len(conds) == 0 {
		return "TRUE", nil
	}
	return strings.Join(conds, " AND "), args
}

// selectList is the columns selected: the key, the mapped columns, the
// creation time (as Unix seconds for a TIMESTAMP, as text for a
// DATETIME).
func (s *source) selectList() string {
	parts := []string{schema.QuoteIdentifier(s.key)}
	for _, c := range s.cols {
		parts = append(parts, schema.QuoteIdentifier(c.name))
	}
	if s.createdAtType != "" {
		parts = append(parts, s.createdSelect())
	}
	return strings.Join(parts, ", ")
}

// createdSelect selects the creation time as parseCreated reads it: Unix
// seconds for a TIMESTAMP, text for a DATETIME.
func (s *source) createdSelect() string {
	if s.createdAtType == "timestamp" {
		return "UNIX_TIMESTAMP(" + schema.QuoteIdentifier(s.createdAt) + ")"
	}
	return "CAST(" + schema.QuoteIdentifier(s.createdAt) + " AS CHAR)"
}

// chunk reads the next at most n rows of the window after cursor from
// (from the first when nil) in the table's order, calling fn for each
// with the row decoded as the binlog reader decodes it (valid until fn
// returns) and its cursor, and returns the cursor of the last row read (nil when none).
//
// In key order the next chunk is `key > last`. In created-at order it
// is the rows after the last one in (creation time, key) order: `c >
// c(last) OR (c = c(last) AND key > last)`, where c(last) is the last
// row's own value, looked up by its key in the snapshot (a constant
// subquery: no text or time zone round trip, and the server still
// reads the range of an index on c). A NULL creation time sorts first:
// after such a row come the NULL rows of greater key, then every other.
func (s *source) chunk(ctx context.Context, q querier, from *cursor, n int, since time.Time, where string, uuidOrder binlog.UUIDBinary, fn func(*binlog.OutboxRow, *cursor) error) (*cursor, error) {
	stmt, args := s.chunkQuery(from, n, since, where)
	rows, err := q.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("reading a chunk of %s: %w", s.name, err)
	}
	defer rows.Close()
	vals := make([]sql.RawBytes, len(s.cols)+2)
	ptrs := make([]any, 0, len(vals))
	var last *cursor
	var k []byte
	ptrs = append(ptrs, &k)
	for i := range s.cols {
		ptrs = append(ptrs, &vals[i])
	}
	var created sql.RawBytes
	if s.createdAtType != "" {
		ptrs = append(ptrs, &created)
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("reading a row of %s: %w", s.name, err)
		}
		last = &cursor{key: string(k), nullCreated: created == nil}
		r := &s.row
		*r = binlog.OutboxRow{Database: s.name.Database, Table: s.name.Table}
		for i, c := range s.cols {
			if vals[i] == nil {
				continue
			}
			v := bytes.Clone(vals[i]) // RawBytes is the driver's buffer: the record outlives it
			if c.field == &r.EventID && s.eventUUID && len(v) == 16 {
				v = binlog.UUIDText(v, uuidOrder)
			}
			*c.field = v
		}
		r.PayloadBinary = binaryTypes[s.payload]
		if created != nil {
			t, err := s.parseCreated(string(created))
			if err != nil {
				return nil, fmt.Errorf("reading %s of row %s=%s of %s: %w", s.createdAt, s.key, k, s.name, err)
			}
			r.CreatedAt = t
			last.created = t
		}
		if s.first == nil {
			s.first = last.position(s)
		}
		if err := fn(r, last); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading a chunk of %s: %w", s.name, err)
	}
	return last, nil
}

// chunkQuery is chunk's statement and its arguments.
func (s *source) chunkQuery(from *cursor, n int, since time.Time, where string) (string, []any) {
	cond, args := s.window(since, where)
	key := schema.QuoteIdentifier(s.key)
	orderBy := key
	if s.order == OrderCreatedAt {
		c := schema.QuoteIdentifier(s.createdAt)
		orderBy = c + ", " + key
		switch {
		case from == nil:
		case from.nullCreated:
			cond = "((" + c + " IS NULL AND " + key + " > ?) OR " + c + " IS NOT NULL) AND " + cond
			args = append([]any{from.key}, args...)
		default:
			bound := "(SELECT b." + c + " FROM " + s.name.QuotedString() + " AS b WHERE b." + key + " = ?)"
			cond = "(" + c + " > " + bound + " OR (" + c + " = " + bound + " AND " + key + " > ?)) AND " + cond
			args = append([]any{from.key, from.key, from.key}, args...)
		}
	} else if from != nil {
		cond = key + " > ? AND " + cond
		args = append([]any{from.key}, args...)
	}
	return "SELECT " + s.selectList() + " FROM " + s.name.QuotedString() + " WHERE " + cond + " ORDER BY " + orderBy + " LIMIT ?", append(args, n)
}

// position is where c is in the table's order as an integer, for the
// progress estimate (keyProgress): the key in key order, the creation
// time in microseconds in created-at order (nil when NULL or zero).
func (c *cursor) position(s *source) any {
	if s.order != OrderCreatedAt {
		return c.key
	}
	if c.nullCreated || c.created.IsZero() {
		return nil
	}
	return c.created.UnixMicro()
}

// parseCreated reads the selected creation time as the binlog reader
// does: a TIMESTAMP is an instant (UTC), a DATETIME a wall time in the
// zone; a zero date is the zero time (the record then takes the commit
// time).
func (s *source) parseCreated(v string) (time.Time, error) {
	if s.createdAtType == "datetime" {
		if strings.HasPrefix(v, "0000-00-00") {
			return time.Time{}, nil
		}
		return time.ParseInLocation("2006-01-02 15:04:05.999999", v, s.zone)
	}
	sec, frac, _ := strings.Cut(v, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	if n == 0 && strings.Trim(frac, "0") == "" {
		return time.Time{}, nil
	}
	var us int64
	if frac != "" {
		frac = (frac + "000000")[:6]
		if us, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return time.Time{}, err
		}
	}
	return time.Unix(n, us*1000).UTC(), nil
}

// querier is a connection, a transaction or a pool.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

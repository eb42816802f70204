package outbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// DefaultTable is the table the package-level Insert writes to: "outbox"
// in the connection's current database.
const DefaultTable = "outbox"

// Flavors accepted by DDL.
const (
	FlavorMySQL   = schema.FlavorMySQL   // "mysql": JSON columns
	FlavorMariaDB = schema.FlavorMariaDB // "mariadb": LONGTEXT columns with CHECK (JSON_VALID(...))
)

// Statement limits for InsertMany. The client/server protocol allows at most
// 65535 placeholders in one statement, and a statement must fit the
// server's max_allowed_packet (16 MiB by default on MariaDB, 64 MiB on
// MySQL 8); a few MiB per statement is as fast as one huge statement.
const (
	maxPlaceholders   = 65535
	maxStatementBytes = 4 << 20
)

// Writer inserts outbox events into one table, in the caller's transaction.
// It holds no connection and no state besides the table and its columns:
// one Writer per table, safe for concurrent use.
type Writer struct {
	table   string  // as given to New
	cols    Columns // validated
	err     error   // from New; returned by every call
	prefix  string  // INSERT INTO `db`.`table` (`event_id`, ...) VALUES
	group   string  // (?, ?, ...) for one row
	columns int     // columns written per row
}

// Option configures a Writer.
type Option interface{ apply(*Writer) }

type optionFunc func(*Writer)

func (f optionFunc) apply(w *Writer) { f(w) }

// WithColumns sets the table's column names, like the router's --preset
// and --column-* flags; the default is DefaultColumns(). Use
// DebeziumColumns() for a Debezium outbox table.
func WithColumns(c Columns) Option {
	return optionFunc(func(w *Writer) { w.cols = c })
}

// New returns a Writer for table, "table" (in the connection's current
// database) or "database.table", either part optionally quoted with
// backticks as in the router's --outbox-table. The router must be given
// the same table, with its database, and the same columns.
//
// An invalid table name or Columns does not fail here: every Insert and
// InsertMany of the Writer returns the error, before touching the
// transaction.
func New(table string, opts ...Option) *Writer {
	w := &Writer{table: table, cols: DefaultColumns()}
	for _, o := range opts {
		o.apply(w)
	}
	quoted, err := quoteTable(table)
	if err != nil {
		w.err = fmt.Errorf("outbox writer: table name %q: %w", table, err)
		return w
	}
	if err := w.cols.validate(); err != nil {
		w.err = fmt.Errorf("outbox writer for %s: %w", table, err)
		return w
	}
	names := []string{w.cols.EventID, w.cols.AggregateType, w.cols.AggregateID, w.cols.EventType, w.cols.Payload}
	for _, opt := range []string{w.cols.SchemaVersion, w.cols.Traceparent, w.cols.Headers} {
		if opt != "" {
			names = append(names, opt)
		}
	}
	for i, n := range names {
		names[i] = schema.QuoteIdentifier(n)
	}
	w.columns = len(names)
	w.prefix = "INSERT INTO " + quoted + " (" + strings.Join(names, ", ") + ") VALUES "
	w.group = "(?" + strings.Repeat(", ?", len(names)-1) + ")"
	return w
}

// Insert writes e into the Writer's table within tx and returns its id
// (e.ID, or the UUIDv7 generated for a zero e.ID). The event exists for the
// router only if tx commits. A *FieldError (errors.Is ErrInvalidEvent)
// means e was rejected before anything was sent; other errors come from
// New's arguments, a nil tx or the server. After any error the caller
// should roll tx back.
func (w *Writer) Insert(ctx context.Context, tx *sql.Tx, e Event) (uuid.UUID, error) {
	ids, err := w.insert(ctx, tx, []Event{e}, true)
	if err != nil {
		return uuid.Nil, err
	}
	return ids[0], nil
}

// InsertMany writes es into the Writer's table within tx with one
// multi-row INSERT, and returns their ids in the order of es. It checks
// every event before writing any. Only a batch past the protocol's limits
// (65535 placeholders, or about 4 MiB of values) is split into several
// INSERTs, all in tx, so the batch is still all-or-nothing with tx. The
// rows, and so the Kafka records of each aggregate, are in the order of es.
// No events is a no-op.
func (w *Writer) InsertMany(ctx context.Context, tx *sql.Tx, es ...Event) ([]uuid.UUID, error) {
	if len(es) == 0 {
		if w.err != nil {
			return nil, w.err
		}
		return nil, nil
	}
	return w.insert(ctx, tx, es, false)
}

// insert checks and writes es. single is Insert's call, whose FieldError
// has Index -1.
func (w *Writer) insert(ctx context.Context, tx *sql.Tx, es []Event, single bool) ([]uuid.UUID, error) {
	if w.err != nil {
		return nil, w.err
	}
	rows := make([]row, len(es))
	ids := make([]uuid.UUID, len(es))
	seen := make(map[uuid.UUID]int, len(es))
	for i := range es {
		index := i
		if single {
			index = -1
		}
		r, err := w.encode(index, &es[i])
		if err != nil {
			return nil, err
		}
		if r.id == uuid.Nil {
			if r.id, err = uuid.NewV7(); err != nil {
				return nil, fmt.Errorf("outbox: generating a UUIDv7 event id: %w", err)
			}
		} else if j, dup := seen[r.id]; dup {
			return nil, &FieldError{Index: index, Field: "ID",
				Reason: fmt.Sprintf("%s is also the ID of event %d; event ids are unique (leave ID zero for a new UUIDv7)", r.id, j)}
		}
		seen[r.id] = i
		rows[i], ids[i] = r, r.id
	}

	if tx == nil {
		return nil, errors.New("outbox: nil *sql.Tx; begin a transaction, do the business write and the Insert in it, then commit")
	}

	perStatement := maxPlaceholders / w.columns
	for start := 0; start < len(rows); {
		end, size := start, 0
		for end < len(rows) && end-start < perStatement && (end == start || size+rows[end].size <= maxStatementBytes) {
			size += rows[end].size
			end++
		}
		if err := w.exec(ctx, tx, rows[start:end]); err != nil {
			return nil, err
		}
		start = end
	}
	return ids, nil
}

// exec runs one INSERT of rows.
func (w *Writer) exec(ctx context.Context, tx *sql.Tx, rows []row) error {
	var q strings.Builder
	q.Grow(len(w.prefix) + len(rows)*(len(w.group)+2))
	q.WriteString(w.prefix)
	args := make([]any, 0, len(rows)*w.columns)
	for i, r := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(w.group)
		args = append(args, r.id.String(), r.aggregateType, r.aggregateID, r.eventType, r.payload)
		if w.cols.SchemaVersion != "" {
			args = append(args, r.schemaVersion)
		}
		if w.cols.Traceparent != "" {
			args = append(args, r.traceparent)
		}
		if w.cols.Headers != "" {
			args = append(args, r.headers)
		}
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		if len(rows) == 1 {
			return fmt.Errorf("outbox: inserting event %s into %s: %w", rows[0].id, w.table, err)
		}
		return fmt.Errorf("outbox: inserting %d events into %s: %w", len(rows), w.table, err)
	}
	return nil
}

// DDL returns the CREATE TABLE statement for the Writer's table and
// columns, for flavor FlavorMySQL or FlavorMariaDB: the statement `binlog-router
// schema` prints for the same table and columns.
func (w *Writer) DDL(flavor string) (string, error) {
	if w.err != nil {
		return "", w.err
	}
	return schema.DDL(flavor, w.table, w.cols.toSchema())
}

// defaultWriter serves the package-level functions.
var defaultWriter = New(DefaultTable)

// Insert writes e into the table "outbox" of tx's current database with
// the default columns; see Writer.Insert.
func Insert(ctx context.Context, tx *sql.Tx, e Event) (uuid.UUID, error) {
	return defaultWriter.Insert(ctx, tx, e)
}

// DDL returns the CREATE TABLE statement of the default outbox table
// "outbox" with DefaultColumns, for flavor FlavorMySQL or FlavorMariaDB: the
// same text as `binlog-router schema --flavor FLAVOR`. An unknown flavor is
// an error.
func DDL(flavor string) (string, error) {
	return defaultWriter.DDL(flavor)
}

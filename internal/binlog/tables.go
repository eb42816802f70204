package binlog

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// ColumnSource returns a table's column names in ordinal order. It is used
// when TABLE_MAP events carry no column names (binlog_row_metadata is not
// FULL).
type ColumnSource func(ctx context.Context, database, table string) ([]string, error)

// outboxSet is the immutable set of configured outbox tables. It is read
// by go-mysql's parser goroutine (to skip other tables' rows without
// decoding them) and by the stream, so it must never change after New.
type outboxSet map[string]map[string]struct{}

func newOutboxSet(tables []schema.TableName) outboxSet {
	s := outboxSet{}
	for _, t := range tables {
		if s[t.Database] == nil {
			s[t.Database] = map[string]struct{}{}
		}
		s[t.Database][t.Table] = struct{}{}
	}
	return s
}

// has does not allocate: the string conversions in map index expressions
// are optimised away.
func (s outboxSet) has(db, table []byte) bool {
	tables, ok := s[string(db)]
	if !ok {
		return false
	}
	_, ok = tables[string(table)]
	return ok
}

// mentionedIn reports whether a DDL statement may touch an outbox table.
// It errs on the side of yes: a false positive only costs a refresh.
func (s outboxSet) mentionedIn(query []byte) bool {
	q := strings.ToLower(string(query))
	for _, tables := range s {
		for t := range tables {
			if strings.Contains(q, strings.ToLower(t)) {
				return true
			}
		}
	}
	return false
}

// table is an outbox table as resolved from one TABLE_MAP event.
type table struct {
	db, tbl string
	name    string // db.table
	layout  schema.Layout
	names   []string       // column names in ordinal order
	codec   *rowCodec      // built by codecFor from the table's TABLE_MAP events
	convs   []valueConv    // stored bytes → what SELECT prints, for mapped columns
	zone    *time.Location // a DATETIME created_at's time zone; nil for other types
	// payloadBinary: the payload column is a binary string (BINARY,
	// VARBINARY, a BLOB type), copied to OutboxRow.PayloadBinary.
	payloadBinary bool
	// checkJSON: check payloads for JSON and set OutboxRow.PayloadJSON
	// (Config.CheckPayloadJSON).
	checkJSON bool
}

// columnName names the column at ordinal ord for errors.
func (t *table) columnName(ord int) string {
	if ord < len(t.names) {
		return fmt.Sprintf("%d (%s)", ord+1, t.names[ord])
	}
	return fmt.Sprint(ord + 1)
}

// tableCache resolves TABLE_MAP events of outbox tables to column layouts.
// Table ids are stable until the server reopens the table (after DDL or a
// restart), so layouts are cached by id and verified by name.
type tableCache struct {
	outbox  outboxSet
	columns schema.Columns
	source  ColumnSource
	values  valueOptions

	byID      map[uint64]*table
	fromQuery map[string][]string // db.table -> columns read through source

	// defs, when set, is the only source of column names for TABLE_MAP
	// events without them (the live reader); source then is unused.
	defs *definitions
	// settle holds definitions read from information_schema that are in
	// force only after the DDL of GTID settleAfter[name].
	settle      map[string]schema.TableDef
	settleAfter map[string]string
}

func newTableCache(outbox outboxSet, columns schema.Columns, source ColumnSource, values valueOptions) *tableCache {
	return &tableCache{outbox: outbox, columns: columns, source: source, values: values,
		byID: map[uint64]*table{}, fromQuery: map[string][]string{}}
}

// reset forgets table ids (they are only valid within one connection's
// view of the server) but keeps queried column lists.
func (c *tableCache) reset() { clear(c.byID) }

// invalidate drops every queried column list after DDL that may touch an
// outbox table; the next TABLE_MAP asks the server again.
func (c *tableCache) invalidate() {
	clear(c.fromQuery)
	clear(c.byID)
}

// lookup returns the resolved outbox table of a rows event's TABLE_MAP.
// gtidText names the transaction in errors.
func (c *tableCache) lookup(ctx context.Context, tm *replication.TableMapEvent, gtidText string) (*table, error) {
	if t, ok := c.byID[tm.TableID]; ok && t.db == string(tm.Schema) && t.tbl == string(tm.Table) {
		return t, nil
	}
	name := qualified(tm)
	names := tm.ColumnNameString()
	fromMeta := names != nil
	var defs []schema.ColumnDef // the tracked definition, when it names the columns
	if !fromMeta && c.defs != nil {
		def, known := c.defs.known(name)
		cols := def.Columns
		if !known {
			why := c.defs.why[name]
			if why == "" {
				why = "it was not read at start"
			}
			err := fmt.Errorf("%w: the binlog carries no column names (binlog_row_metadata is not FULL) and the table's column layout when this row was written is not known: %s", ErrUnmappable, why)
			fix := fullMetadataFix
			if why == whyMetadataChanged {
				err, fix = settingError{err}, metadataChangedFix
			}
			return nil, &EventError{Table: name, GTID: gtidText, Err: err, Fix: fix}
		}
		if err := checkTableMap(tm, cols); err != nil {
			return nil, &EventError{Table: name, GTID: gtidText,
				Err: fmt.Errorf("%w: the row does not match the column layout the router tracked (%s): %w", ErrUnmappable, describeDefs(cols), err),
				Fix: fullMetadataFix}
		}
		names, defs = schema.Names(cols), cols
	} else if !fromMeta {
		var err error
		if names, err = c.queried(ctx, tm, false); err != nil {
			return nil, &EventError{Table: name, GTID: gtidText, Err: fmt.Errorf("%w: reading its columns: %w", ErrUnmappable, err),
				Fix: "set binlog_row_metadata=FULL on the server, or grant SELECT on the table so its columns can be read from information_schema"}
		}
		if len(names) != int(tm.ColumnCount) {
			// The table changed since we last asked; ask once more.
			if names, err = c.queried(ctx, tm, true); err != nil {
				return nil, &EventError{Table: name, GTID: gtidText, Err: fmt.Errorf("%w: reading its columns: %w", ErrUnmappable, err)}
			}
		}
	}
	if len(names) != int(tm.ColumnCount) {
		return nil, &EventError{Table: name, GTID: gtidText,
			Err: fmt.Errorf("%w: the binlog row has %d columns but the table has %d now", ErrUnmappable, tm.ColumnCount, len(names)),
			Fix: "the table's definition changed after this row was written; set binlog_row_metadata=FULL on the server so rows carry their own column names, then restart"}
	}
	layout, err := c.columns.Resolve(name, names)
	if err != nil {
		return nil, &EventError{Table: name, GTID: gtidText, Err: fmt.Errorf("%w: %w", ErrUnmappable, err)}
	}
	convs, zone, err := valueConvs(tm, layout, names, defs, c.values)
	if err != nil {
		return nil, &EventError{Table: name, GTID: gtidText, Err: fmt.Errorf("%w: %w", ErrUnmappable, err)}
	}
	if len(c.byID) > 4096 {
		clear(c.byID)
	}
	t := &table{db: string(tm.Schema), tbl: string(tm.Table), name: name, layout: layout, names: names, convs: convs, zone: zone,
		checkJSON: c.values.checkJSON}
	for _, vc := range convs {
		if vc.field == fieldPayload && vc.charset == "binary" {
			t.payloadBinary = true
		}
	}
	c.byID[tm.TableID] = t
	return t, nil
}

func (c *tableCache) queried(ctx context.Context, tm *replication.TableMapEvent, refresh bool) ([]string, error) {
	name := qualified(tm)
	if names, ok := c.fromQuery[name]; ok && !refresh {
		return names, nil
	}
	if c.source == nil {
		return nil, fmt.Errorf("the binlog has no column names (binlog_row_metadata is not FULL) and no server connection to read them from")
	}
	names, err := c.source(ctx, string(tm.Schema), string(tm.Table))
	if err != nil {
		return nil, err
	}
	c.fromQuery[name] = names
	return names, nil
}

func qualified(tm *replication.TableMapEvent) string {
	return string(tm.Schema) + "." + string(tm.Table)
}

package binlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// whyMetadataChanged is why a table's definition is not known when the
// router started with binlog_row_metadata=FULL, and metadataChangedFix
// the way out: a router started without FULL metadata tracks the
// definitions from its start position.
const (
	whyMetadataChanged = "binlog_row_metadata was FULL when the router started, and rows without column names came later (the setting changed at runtime)"
	metadataChangedFix = "restart the router: started while binlog_row_metadata is not FULL, it reads the table's columns from information_schema, follows them through DDL and routes these rows; set binlog_row_metadata=FULL again (SET PERSIST or the server's configuration) once it has passed them, since a router started with FULL stops at rows without column names"
)

// startDefinitions prepares the tracked definitions for a Run from from,
// when TABLE_MAP events carry no column names.
//
// A complete definition given by SetLayouts (a checkpoint's, of the start
// position) is taken as it is. Otherwise the definition is read from
// information_schema, which tells it at the moment it is read, not when
// the rows ahead were written. So the binlog between from and the
// server's position after the read is scanned first for statements that
// touch an outbox table. A table untouched in that range has, for every
// row ahead, the definition read. A table touched there has the
// checkpoint's definition, if one was given without character sets and
// signs (an earlier version's), and else no known definition, until the
// last such statement (unless the stream meets a CREATE TABLE for it),
// and information_schema's after it; rows that need what is not known
// stop the router. A statement in the range that may have run while the
// definition was being read makes the read useless: Run refuses to start
// and says so.
func (r *Reader) startDefinitions(ctx context.Context, from *gtid.Set, c *tableCache) error {
	c.defs = newDefinitions(r.outbox)
	c.settle, c.settleAfter = map[string]schema.TableDef{}, map[string]string{}
	if r.server.FullMetadata() {
		for _, t := range r.cfg.Tables {
			c.defs.forget(t.String(), whyMetadataChanged)
		}
		return nil
	}
	var need []schema.TableName
	for _, t := range r.cfg.Tables {
		if def := r.layouts[t.String()]; def.Columns != nil && complete(def) {
			c.defs.set(t.String(), def)
		} else {
			need = append(need, t)
		}
	}
	if len(need) == 0 {
		return nil
	}
	before, err := binlogPosition(ctx, r.db)
	if err != nil {
		return err
	}
	read := map[string]schema.TableDef{}
	for _, t := range need {
		def, err := schema.TableDefinition(ctx, r.db, t.Database, t.Table)
		switch {
		case errors.Is(err, schema.ErrTableNotFound):
			c.defs.forget(t.String(), "the table did not exist when the router started, and no CREATE TABLE for it was met")
		case err != nil:
			return err
		default:
			read[t.String()] = def
		}
	}
	after, err := binlogPosition(ctx, r.db)
	if err != nil {
		return err
	}
	found, err := r.scanDDL(ctx, from, after)
	if err != nil {
		return fmt.Errorf("scanning the binlog for schema changes of the outbox tables up to %s: %w", after, err)
	}
	for name, def := range read {
		stored := r.layouts[name]
		last, ok := found[name]
		switch {
		case !ok && stored.Columns != nil && !sameNames(stored.Columns, def.Columns):
			c.defs.forget(name, fmt.Sprintf("the checkpoint's columns (%s) differ from information_schema's (%s), and no DDL statement in the binlog since changed the table", describeDefs(stored.Columns), describeDefs(def.Columns)))
			continue
		case !ok:
			c.defs.set(name, def)
			continue
		}
		if before.before(last.pos) {
			return fmt.Errorf("outbox table %s changed (transaction %s) while its columns were read from information_schema; start again", name, last.gtid)
		}
		if stored.Columns != nil {
			c.defs.set(name, stored)
		} else {
			c.defs.forget(name, fmt.Sprintf("a later DDL statement (transaction %s: %s) changed the table before the router read its columns from information_schema, so the columns it read do not describe this row", last.gtid, clip(last.query, 200)))
		}
		c.settle[name], c.settleAfter[name] = def, last.gtid
	}
	return nil
}

// complete reports whether def records the character set of every string
// column and the sign of every numeric one.
func complete(def schema.TableDef) bool {
	for _, c := range def.Columns {
		if schema.IsStringType(c.DataType) && c.Charset == "" || schema.IsNumericType(c.DataType) && c.Sign == "" {
			return false
		}
	}
	return true
}

// before orders binlog positions (file names sort in creation order).
func (p Position) before(q Position) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	return p.Pos < q.Pos
}

func (p Position) String() string { return p.File + ":" + strconv.FormatUint(uint64(p.Pos), 10) }

// binlogPosition is the server's current binlog file and position.
func binlogPosition(ctx context.Context, db *sql.DB) (Position, error) {
	for _, q := range []string{"SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			continue
		}
		cols, _ := rows.Columns()
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		var p Position
		ok := rows.Next()
		if ok {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return Position{}, fmt.Errorf("%s: %w", q, err)
			}
			pos, _ := strconv.ParseUint(string(vals[1]), 10, 32)
			p = Position{File: string(vals[0]), Pos: uint32(pos)}
		}
		rows.Close()
		if !ok {
			return Position{}, fmt.Errorf("%s returned nothing: is binary logging on?", q)
		}
		return p, nil
	}
	return Position{}, errors.New("reading the binlog position: neither SHOW BINARY LOG STATUS nor SHOW MASTER STATUS works; grant the router's user REPLICATION CLIENT (MariaDB: BINLOG MONITOR)")
}

// ddlMark is the last statement of a range that touched a table.
type ddlMark struct {
	gtid, query string
	pos         Position // end of its event
}

// scanDDL reads the binlog from from up to until and returns, per outbox
// table, the last statement that names it. Row events are not decoded.
func (r *Reader) scanDDL(ctx context.Context, from *gtid.Set, until Position) (map[string]ddlMark, error) {
	found := map[string]ddlMark{}
	start, err := gomysql.ParseGTIDSet(string(r.server.Flavor), from.String())
	if err != nil {
		return nil, err
	}
	cfg, err := r.syncerConfig(r.cfg.ServerID, func(*replication.RowsEvent, []byte) error { return nil })
	if err != nil {
		return nil, err
	}
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	streamer, err := syncer.StartSyncGTID(start)
	if err != nil {
		return nil, err
	}
	defs := newDefinitions(r.outbox)
	var pos Position
	var txn string
	for pos.before(until) {
		ev, err := streamer.GetEvent(ctx)
		if err != nil {
			if f := classify(err, from.String()); f != nil {
				return nil, f
			}
			return nil, err
		}
		if ev.Header.LogPos > 0 {
			pos.Pos = ev.Header.LogPos
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			pos = Position{File: string(e.NextLogName), Pos: uint32(e.Position)}
		case *replication.MariadbGTIDEvent:
			txn = string(gtid.AppendMariaDB(nil, e.GTID.DomainID, e.GTID.ServerID, e.GTID.SequenceNumber))
		case *replication.GTIDEvent:
			if len(e.SID) == 16 && e.GNO > 0 {
				txn = string(gtid.AppendMySQL(nil, [16]byte(e.SID), "", e.GNO))
			}
		case *replication.GtidTaggedLogEvent:
			if len(e.SID) == 16 && e.GNO > 0 {
				txn = string(gtid.AppendMySQL(nil, [16]byte(e.SID), e.Tag.String(), e.GNO))
			}
		case *replication.QueryEvent:
			q := strings.TrimSpace(string(e.Query))
			if strings.EqualFold(q, "BEGIN") || strings.EqualFold(q, "COMMIT") || !r.outbox.mentionedIn(e.Query) {
				continue
			}
			// Every table the statement may touch counts: parsed when
			// possible, else every outbox table it names.
			res, _ := defs.apply(q, string(e.Schema))
			touched := res.touched
			if res.statement != "" {
				continue // a write: the stream stops at it
			}
			for _, name := range touched {
				found[name] = ddlMark{gtid: txn, query: q, pos: pos}
			}
		}
	}
	return found, nil
}

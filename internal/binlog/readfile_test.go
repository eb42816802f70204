package binlog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// FileConfig configures ReadFile.
type FileConfig struct {
	Flavor   gtid.Flavor
	Tables   []schema.TableName
	Columns  schema.Columns
	OnUpdate UpdatePolicy
	// Source gives column names for tables whose TABLE_MAP events carry
	// none; nil means such an outbox table is an error.
	Source ColumnSource
	// Prepared are XA transactions prepared before the file (in files of
	// the same directory); an XA COMMIT reads their rows from there.
	Prepared []PreparedXA
	// UUIDBinary is the byte order of 16-byte binary event ids; default
	// UUIDStandard.
	UUIDBinary UUIDBinary
	// DatetimeZone is the time zone of a DATETIME created_at; nil makes
	// such a column an error.
	DatetimeZone *time.Location
}

// ReadFile decodes a binlog file with the same stream as live
// replication and calls fn for each transaction, in order, with a Batch
// holding its rows and itself as the one Done transaction. Used to decode
// binlog files copied from a server (and to test MySQL decoding, for which
// no server runs here). Checksums are not verified: files copied from a
// running server carry the in-use flag that makes MySQL's header checksum
// differ.
func ReadFile(ctx context.Context, path string, cfg FileConfig, fn func(Batch) error) error {
	if cfg.OnUpdate == "" {
		cfg.OnUpdate = UpdateWarn
	}
	outbox := newOutboxSet(cfg.Tables)
	s := &stream{
		flavor: cfg.Flavor,
		tables: newTableCache(outbox, cfg.Columns, cfg.Source, valueOptions{flavor: cfg.Flavor, uuid: cfg.UUIDBinary,
			zone: cfg.DatetimeZone, noZone: "a binlog file does not say it: set FileConfig.DatetimeZone"}),
		onUpdate: cfg.OnUpdate,
		observer: nopObserver{},
		out:      &fileSink{fn: fn},
		pos:      Position{File: filepath.Base(path)},
		rows:     newUndecoded(),
		xa:       &xaState{prepared: slices.Clone(cfg.Prepared), reread: fileRereader{dir: filepath.Dir(path), cfg: cfg, outbox: outbox}},
	}
	p := newFileParser(cfg.Flavor, outbox, s.rows)
	err := p.ParseFile(path, 0, func(ev *replication.BinlogEvent) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return s.handle(ctx, ev)
	})
	if err != nil {
		return fmt.Errorf("reading binlog file %s: %w", path, err)
	}
	return nil
}

// fileSink makes one Batch per transaction.
type fileSink struct {
	fn  func(Batch) error
	cur Batch
}

func (f *fileSink) addRows(_ context.Context, rows []OutboxRow, sizes []int, pos Position) (int, error) {
	f.cur.Rows = append(f.cur.Rows, rows...)
	for _, size := range sizes {
		f.cur.Bytes += size
	}
	f.cur.Open, f.cur.Pos = true, pos
	return len(rows), nil
}

func (f *fileSink) done(_ context.Context, t *Txn, pos Position) error {
	b := f.cur
	b.Done, b.Open, b.Pos = []*Txn{t}, false, pos
	f.cur = Batch{}
	return f.fn(b)
}

func (f *fileSink) heartbeat(Position) {}

func newFileParser(flavor gtid.Flavor, outbox outboxSet, rows *undecoded) *replication.BinlogParser {
	p := replication.NewBinlogParser()
	p.SetFlavor(string(flavor))
	p.SetParseTime(true)
	p.SetRenderJSONAsMySQLText(true)
	p.SetVerifyChecksum(false)
	p.SetRowsEventDecodeFunc(func(e *replication.RowsEvent, data []byte) error {
		return decodeOutboxRows(outbox, rows, e, data)
	})
	return p
}

// fileRereader reads prepare groups again from the binlog files of a
// directory.
type fileRereader struct {
	dir    string
	cfg    FileConfig
	outbox outboxSet
}

func (f fileRereader) reread(ctx context.Context, file string, pos uint32, rows *undecoded, fn func(*replication.BinlogEvent) error) error {
	path := filepath.Join(f.dir, filepath.Base(file))
	if _, err := os.Stat(path); err != nil {
		return &PurgedError{Start: fmt.Sprintf("%s:%d", file, pos), Server: err.Error()}
	}
	finished := false
	err := newFileParser(f.cfg.Flavor, f.outbox, rows).ParseFile(path, int64(pos), func(ev *replication.BinlogEvent) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := fn(ev)
		if errors.Is(err, errRereadDone) {
			finished = true
		}
		return err
	})
	if finished {
		return errRereadDone
	}
	return err
}

package binlog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/logging"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Reader replicates the binlog of one server and delivers the outbox rows
// of whole transactions, in binlog order, as Batches.
type Reader struct {
	cfg    Config
	db     *sql.DB
	server *Server
	outbox outboxSet
	log    zerolog.Logger

	values   valueOptions               // UUID byte order, DATETIME zone
	layouts  map[string]schema.TableDef // definitions in force at the next Run's start (SetLayouts)
	prepared []PreparedXA               // XA transactions prepared before the next Run's start
}

// SetLayouts gives the next Run the outbox tables' definitions in force
// at its start position, as a checkpoint stored them (Txn.Layouts). They
// must belong to exactly that position. Run takes a complete definition
// as it is; one without the character sets and signs of its columns (a
// checkpoint of an earlier version) is completed from information_schema
// where no DDL statement touched the table since. nil forgets them.
func (r *Reader) SetLayouts(layouts map[string]schema.TableDef) { r.layouts = layouts }

// SetPrepared sets the XA transactions prepared before the position the
// next Run starts from, whose COMMIT or ROLLBACK may follow: the list the
// checkpoint carries (Txn.XA of the last transaction it covers).
func (r *Reader) SetPrepared(p []PreparedXA) { r.prepared = slices.Clone(p) }

// Open connects to the server over SQL, reads its settings and checks the
// ones the router cannot work without. The caller must Close the Reader.
func Open(ctx context.Context, cfg Config) (*Reader, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dsn := mysql.NewConfig()
	dsn.User, dsn.Passwd, dsn.Net, dsn.Addr = cfg.User, cfg.Password, "tcp", cfg.Addr
	dsn.ParseTime = true
	dsn.Timeout = 10 * time.Second
	if cfg.TLS != nil {
		if err := mysql.RegisterTLSConfig("binlog-router", cfg.TLS); err != nil {
			return nil, err
		}
		dsn.TLSConfig = "binlog-router"
	}
	connector, err := mysql.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql connection settings: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(2)
	server, err := Inspect(ctx, db)
	if err != nil {
		db.Close()
		var me *mysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1045 || me.Number == 1044) {
			hint := ""
			switch {
			case me.Number != 1045:
			case cfg.TLS == nil:
				hint = " (connected without TLS: if the server requires it, with require_secure_transport=ON or a user created with REQUIRE SSL or X509, set --mysql-tls verify-identity and --mysql-tls-ca)"
			case len(cfg.TLS.Certificates) == 0:
				hint = " (connected without a client certificate: if the user was created with REQUIRE X509, set --mysql-tls-cert and --mysql-tls-key)"
			}
			return nil, fmt.Errorf("connecting to %s as %q: %w: %s%s", cfg.Addr, cfg.User, ErrAccessDenied, me.Message, hint)
		}
		return nil, fmt.Errorf("connecting to %s: %w", cfg.Addr, err)
	}
	if err := server.Check(); err != nil {
		db.Close()
		return nil, err
	}
	r := &Reader{cfg: cfg, db: db, server: server, outbox: newOutboxSet(cfg.Tables),
		log: cfg.Logger.With().Str("component", "binlog").Logger()}
	r.values = valueOptions{flavor: server.Flavor, uuid: cfg.UUIDBinary, zone: cfg.DatetimeZone,
		checkJSON: cfg.CheckPayloadJSON}
	if r.values.zone == nil {
		zone, err := server.DatetimeZone()
		if err != nil {
			r.values.noZone = err.Error()
		}
		r.values.zone = zone
	}
	return r, nil
}

// Server returns what was read about the server at Open.
func (r *Reader) Server() *Server { return r.server }

// DB is the reader's SQL connection pool (for information_schema and
// status queries).
func (r *Reader) DB() *sql.DB { return r.db }

// Close releases the SQL connection.
func (r *Reader) Close() error { return r.db.Close() }

// Run streams the binlog from the position after the transactions in from
// into q, blocking while q is full, and closes q with its error when it
// returns. It returns only with an error: ctx's when cancelled, a
// *PurgedError, ErrAccessDenied, a *EventError for an outbox row it cannot
// map, a *PositionIgnoredError for a server that streams what from
// already contains, or the last connection error after ReconnectTimeout.
//
// Lost connections are retried with backoff from the last transaction
// handed over completely; rows of a transaction that was handed over in
// part are not handed over again. A transaction in from, or handed over
// before, is skipped if the server sends it (again). Every transaction is
// therefore delivered once per Run, whatever happens to the connection or
// the server does with the position.
func (r *Reader) Run(ctx context.Context, from *gtid.Set, q *Queue) error {
	return r.RunResume(ctx, from, Resume{}, q)
}

// Resume is a position inside a binlog transaction: the first Rows outbox
// rows of the transaction with GTID were delivered before (by an earlier
// process, as its checkpoint records).
type Resume struct {
	GTID string
	Rows int
}

// RunResume is Run from inside a transaction: from must not contain
// resume's transaction, and the first resume.Rows outbox rows of that
// transaction, when the server sends it, are not handed over again.
func (r *Reader) RunResume(ctx context.Context, from *gtid.Set, resume Resume, q *Queue) (err error) {
	defer func() { q.Close(err) }()
	delivered := from.Clone()
	s := &stream{
		flavor:   r.server.Flavor,
		tables:   newTableCache(r.outbox, r.cfg.Columns, r.columnSource, r.values),
		onUpdate: r.cfg.OnUpdate,
		observer: r.cfg.Observer,
		guard:    r.cfg.Guard,
		out:      &trackingSink{q: q, delivered: delivered},
		rows:     newUndecoded(),
		xa:       &xaState{prepared: slices.Clone(r.prepared), reread: r},
		replay: &replayGuard{have: delivered, server: r.cfg.Addr, version: r.server.Version,
			inexact: !r.server.GTIDStrict, observer: r.cfg.Observer, log: r.log},
	}
	defer s.replay.endRun()
	if resume.GTID != "" && resume.Rows > 0 {
		s.resumeGTID, s.resumeRows = resume.GTID, resume.Rows
	}
	if err := r.startDefinitions(ctx, delivered, s.tables); err != nil {
		return err
	}
	backoff := r.cfg.BackoffMin
	var failingSince time.Time
	for {
		progressed, err := r.session(ctx, delivered, s)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fatal *sessionError
		if errors.As(err, &fatal) {
			return fatal.err
		}
		if f := classify(err, delivered.String()); f != nil {
			return f
		}
		s.interrupted()
		if progressed {
			backoff, failingSince = r.cfg.BackoffMin, time.Time{}
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if r.cfg.ReconnectTimeout > 0 && time.Since(failingSince) > r.cfg.ReconnectTimeout {
			return fmt.Errorf("no binlog connection to %s for %s: %w", r.cfg.Addr, r.cfg.ReconnectTimeout, err)
		}
		r.cfg.Observer.Reconnect()
		r.log.Warn().Err(err).Str("resume_gtid_set", delivered.String()).Dur("backoff", backoff).Msg("binlog connection lost; reconnecting")
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return ctx.Err()
		}
		backoff = min(backoff*2, r.cfg.BackoffMax)
	}
}

// trackingSink forwards to the queue and keeps the GTID set of the
// transactions handed over, from which a reconnect resumes.
type trackingSink struct {
	q         *Queue
	delivered *gtid.Set
}

func (t *trackingSink) addRows(ctx context.Context, rows []OutboxRow, sizes []int, pos Position) (int, error) {
	return t.q.AddRows(ctx, rows, sizes, pos)
}

func (t *trackingSink) done(ctx context.Context, txn *Txn, pos Position) error {
	if err := t.q.EndTxn(ctx, txn, pos); err != nil {
		return err
	}
	txn.AddTo(t.delivered)
	return nil
}

func (t *trackingSink) heartbeat(pos Position) { t.q.Heartbeat(pos) }

// sessionError marks an error of the stream itself (not of the
// connection): retrying would meet it again.
type sessionError struct{ err error }

func (e *sessionError) Error() string { return e.err.Error() }

// session runs one replication connection until it fails. progressed
// reports whether any event arrived (the connection worked).
func (r *Reader) session(ctx context.Context, from *gtid.Set, s *stream) (progressed bool, err error) {
	start, err := gomysql.ParseGTIDSet(string(r.server.Flavor), from.String())
	if err != nil {
		return false, &sessionError{fmt.Errorf("start position %q: %w", from.String(), err)}
	}
	outbox, rows := r.outbox, s.rows
	cfg, err := r.syncerConfig(r.cfg.ServerID, func(e *replication.RowsEvent, data []byte) error {
		return decodeOutboxRows(outbox, rows, e, data)
	})
	if err != nil {
		return false, &sessionError{err}
	}
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	// MySQL's own replicas send COM_BINLOG_DUMP_GTID without
	// BINLOG_THROUGH_GTID (request_dump in sql/rpl_replica.cc sends 0,
	// or USE_HEARTBEAT_EVENT_V2 in MySQL 8, and warns that early 5.6
	// servers read the low bits), and the server reads the GTID set
	// whatever the flags (com_binlog_dump_gtid in sql/rpl_source.cc).
	// So the router does not send 0x04 either, and go-mysql could not
	// without a fork: it writes that command's flags as 0 and applies
	// DumpCommandFlag to COM_BINLOG_DUMP only. A source that needs the
	// flag (Dolt) streams from its first binlog instead; s.replay keeps
	// that from publishing anything twice. MariaDB's dump takes its
	// position from @slave_connect_state and is not concerned.
	streamer, err := syncer.StartSyncGTID(start)
	if err != nil {
		return false, err
	}
	s.replay.connected()
	defer s.replay.endRun()
	w := newWatchdog(ctx, 3*r.cfg.Heartbeat+2*time.Second)
	defer w.stop()
	for {
		w.waiting()
		ev, err := streamer.GetEvent(w.ctx)
		w.got()
		if err != nil {
			if ctx.Err() == nil && w.ctx.Err() != nil {
				err = fmt.Errorf("no event or heartbeat from the server for %s", w.dead)
			}
			return progressed, err
		}
		progressed = true
		if err := s.handle(ctx, ev); err != nil {
			if ctx.Err() != nil {
				return progressed, ctx.Err()
			}
			var lost *connLost
			if errors.As(err, &lost) {
				return progressed, lost
			}
			return progressed, &sessionError{err}
		}
	}
}

// watchdog cancels its context when the reader has waited for the server
// longer than dead: with heartbeats on, a silent connection is a dead one.
// Time spent handing rows over (a full queue) does not count. It costs two
// atomic additions per event, and no clock reading: the watching goroutine
// times a wait from the first tick that sees it, so a dead connection is
// noticed between dead and dead plus two ticks (dead/4, at least 100 ms)
// after its last event.
type watchdog struct {
	ctx     context.Context
	cancel  context.CancelFunc
	dead    time.Duration
	waits   atomic.Uint64 // odd while waiting: one more when a wait begins, one more when it ends
	stopped chan struct{}
}

func newWatchdog(parent context.Context, dead time.Duration) *watchdog {
	ctx, cancel := context.WithCancel(parent)
	w := &watchdog{ctx: ctx, cancel: cancel, dead: dead, stopped: make(chan struct{})}
	go w.watch()
	return w
}

func (w *watchdog) waiting() { w.waits.Add(1) }
func (w *watchdog) got()     { w.waits.Add(1) }

func (w *watchdog) watch() {
	t := time.NewTicker(max(w.dead/8, 50*time.Millisecond))
	defer t.Stop()
	var seen uint64     // the wait being timed (odd), or 0
	var since time.Time // when it was first seen
	for {
		select {
		case now := <-t.C:
			switch n := w.waits.Load(); {
			case n%2 == 0:
				seen = 0
			case n != seen:
				seen, since = n, now
			case now.Sub(since) > w.dead:
				w.cancel()
				return
			}
		case <-w.stopped:
			return
		case <-w.ctx.Done():
			return
		}
	}
}

func (w *watchdog) stop() {
	close(w.stopped)
	w.cancel()
}

func (r *Reader) columnSource(ctx context.Context, database, table string) ([]string, error) {
	return schema.TableColumns(ctx, r.db, database, table)
}

// syncerConfig is the go-mysql replication client configuration of every
// dump connection the reader opens: serverID is the replica id it presents,
// decode the rows-event decoder (outbox rows left undecoded, others skipped).
func (r *Reader) syncerConfig(serverID uint32, decode func(*replication.RowsEvent, []byte) error) (replication.BinlogSyncerConfig, error) {
	host, portText, err := net.SplitHostPort(r.cfg.Addr)
	if err != nil {
		return replication.BinlogSyncerConfig{}, fmt.Errorf("invalid server address %q: %w", r.cfg.Addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return replication.BinlogSyncerConfig{}, fmt.Errorf("invalid port in %q: %w", r.cfg.Addr, err)
	}
	return replication.BinlogSyncerConfig{
		ServerID:              serverID,
		Flavor:                string(r.server.Flavor),
		Host:                  host,
		Port:                  uint16(port),
		User:                  r.cfg.User,
		Password:              r.cfg.Password,
		TLSConfig:             r.cfg.TLS,
		Charset:               "utf8mb4",
		ParseTime:             true,
		RenderJSONAsMySQLText: true,
		HeartbeatPeriod:       r.cfg.Heartbeat,
		DisableRetrySync:      true,
		DiscardGTIDSet:        true,
		EventCacheCount:       r.cfg.EventCache,
		Logger:                logging.Slog(r.cfg.Logger, "go-mysql"),
		RowsEventDecodeFunc:   decode,
	}, nil
}

package validate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// mysqlFacts is what the server checks found, for the checks that combine
// it with the checkpoint.
type mysqlFacts struct {
	server  *binlog.Server
	version version
	vars    map[string]string // extraVars the server has, by name
	// oldest is the oldest binlog and the GTID position before it
	// (MariaDB only); nil with oldestErr saying why when unknown.
	oldest    *binlogStart
	oldestErr error
}

// binlogStart is the oldest binlog file the server still has.
type binlogStart struct {
	file string
	// before is the Gtid_list at its start: the last GTID of each domain
	// logged before it, all purged.
	before *gtid.Set
}

// mysql runs the checks of the source server and its outbox tables. It
// returns nil when it cannot talk to the server.
func (v *validator) mysql() *mysqlFacts {
	cfg := v.cfg.MySQL
	db, err := openDB(cfg, v.cfg.Timeout)
	if err != nil {
		v.add(connectFailure(err, cfg))
		return nil
	}
	defer db.Close()
	f := &mysqlFacts{vars: map[string]string{}}
	var user string
	if err := v.do(func(ctx context.Context) (err error) {
		if f.server, err = binlog.Inspect(ctx, db); err != nil {
			return err
		}
		return db.QueryRowContext(ctx, "SELECT CURRENT_USER()").Scan(&user)
	}); err != nil {
		v.add(connectFailure(err, cfg))
		return nil
	}
	f.version = parseVersion(f.server.Version)
	for _, name := range extraVars {
		var val sql.NullString
		// An unknown variable is an error: the server does not have it.
		if v.do(func(ctx context.Context) error {
			return db.QueryRowContext(ctx, "SELECT @@global."+name).Scan(&val)
		}) == nil && val.Valid {
			f.vars[name] = val.String
		}
	}
	s := f.server
	v.add(checkServer(s, f.version, cfg.Addr, user, cfg.ServerID),
		checkLogBin(s), checkFormat(s), checkRowImage(s), checkRowMetadata(s, f.version), checkGTID(s, f.vars))

	var grants []string
	grantsErr := v.do(func(ctx context.Context) (err error) {
		grants, err = queryStrings(ctx, db, "SHOW GRANTS")
		return err
	})
	tables := make([]tableInfo, len(cfg.Tables))
	probes := map[schema.TableName]selectAccess{}
	tableErrs := make([]error, len(cfg.Tables))
	for i, t := range cfg.Tables {
		tableErrs[i] = v.do(func(ctx context.Context) (err error) {
			tables[i], err = readTable(ctx, db, t)
			return err
		})
		probes[t] = tables[i].probe
	}
	if grantsErr != nil {
		v.add(warn("privileges", "check by hand that the user has REPLICATION SLAVE and REPLICATION CLIENT (MariaDB 10.5+: BINLOG MONITOR) on *.* and SELECT on the outbox tables",
			"cannot read the grants of %s: %v", user, grantsErr))
	} else {
		v.add(checkPrivileges(privilegeInput{user: user, grants: grants, names: namesFor(s.Flavor, f.version),
			tables: cfg.Tables, probe: probes}))
	}
	if v.cfg.Contracts != nil {
		v.add(contractsLoaded(v.cfg.Contracts))
	}
	for i, info := range tables {
		if tableErrs[i] != nil {
			v.add(fail("outbox table "+info.name.String(), "check that the server answers queries on information_schema",
				"cannot read its definition: %v", tableErrs[i]))
			continue
		}
		if !info.visible {
			v.add(v.missingCheck(db, info, s.Flavor, user))
			continue
		}
		v.add(checkTable(info, cfg.Columns, s.Flavor, user, v.valueRules(s))...)
		if v.cfg.Contracts != nil {
			v.contracts(db, info.name, cfg.Columns.EventType)
		}
	}

	if s.Flavor == gtid.MariaDB && s.LogBin {
		f.oldestErr = v.do(func(ctx context.Context) (err error) {
			f.oldest, err = readOldestBinlog(ctx, db)
			return err
		})
	}
	return f
}

// valueRules are the flags and server facts the column types are judged
// with.
func (v *validator) valueRules(s *binlog.Server) valueRules {
	r := valueRules{requireUUID: v.cfg.RequireUUID, validateJSON: v.cfg.ValidateJSON, uuid: v.cfg.MySQL.UUIDBinary,
		zone: v.cfg.MySQL.DatetimeZone, fullMetadata: s.FullMetadata()}
	if r.zone == nil {
		zone, err := s.DatetimeZone()
		if err != nil {
			r.noZone = err.Error()
		}
		r.zone = zone
	}
	return r
}

// do runs one network step under the step timeout.
func (v *validator) do(step func(ctx context.Context) error) error {
	ctx, cancel := v.step()
	defer cancel()
	return step(ctx)
}

// openDB makes the SQL connection pool the reader would make; it does not
// connect yet.
func openDB(cfg binlog.Config, timeout time.Duration) (*sql.DB, error) {
	dsn := mysql.NewConfig()
	dsn.User, dsn.Passwd, dsn.Net, dsn.Addr = cfg.User, cfg.Password, "tcp", cfg.Addr
	dsn.TLS = cfg.TLS
	dsn.Timeout, dsn.ReadTimeout, dsn.WriteTimeout = timeout, timeout, timeout
	connector, err := mysql.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql connection settings: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(2)
	return db, nil
}

// connectFailure turns a failed first contact into the server check's
// failure, with the fix for the kind of failure.
func connectFailure(err error, cfg binlog.Config) Check {
	fix := "check --mysql-addr, --mysql-user and the password"
	var me *mysql.MySQLError
	var ne net.Error
	var certErr *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var authorityErr x509.UnknownAuthorityError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.As(err, &me) && (me.Number == 1045 || me.Number == 1044 || me.Number == 1698):
		fix = fmt.Sprintf("check --mysql-user (%q) and the password (env BINLOG_ROUTER_MYSQL_PASSWORD or --mysql-password-file), and that the user may connect from this host", cfg.User)
		if cfg.TLS == nil {
			fix += "; if the user or server requires TLS (REQUIRE SSL/X509, require_secure_transport), set --mysql-tls verify-identity"
		}
	case errors.As(err, &me) && me.Number == 3159:
		fix = "the server requires TLS: set --mysql-tls verify-identity (with --mysql-tls-ca if its CA is not a system root)"
	case errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &authorityErr):
		fix = "the server's certificate does not verify: check --mysql-tls-ca and --mysql-tls-server-name"
	case errors.As(err, &recordErr), errors.Is(err, mysql.ErrNoTLS):
		fix = "the server does not speak TLS: enable TLS on the server (ssl_cert, ssl_key) or drop --mysql-tls"
	case errors.As(err, &ne), errors.Is(err, mysql.ErrInvalidConn), errors.Is(err, driver.ErrBadConn), errors.Is(err, context.DeadlineExceeded):
		fix = "check --mysql-addr (host:port of a MySQL or MariaDB server) and that the server is running and reachable from here"
	}
	return fail("server", fix, "cannot talk to %s as %q: %v (the other MySQL checks were skipped)", cfg.Addr, cfg.User, err)
}

// queryStrings returns the first column of every row.
func queryStrings(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// readOldestBinlog finds the oldest binlog of a MariaDB server and the
// Gtid_list event at its start.
func readOldestBinlog(ctx context.Context, db *sql.DB) (*binlogStart, error) {
	file, before, err := binlog.OldestMariaDB(ctx, db)
	if err != nil {
		return nil, err
	}
	return &binlogStart{file: file, before: before}, nil
}

// parseGTIDList parses the Info of a MariaDB Gtid_list event.
func parseGTIDList(info string) (*gtid.Set, error) { return binlog.ParseGTIDList(info) }

// missingCheck judges an outbox table the server does not show exactly as
// `run` does (TableReport.Err): a failure, or with --allow-missing-table
// and no table of a close name, a warning.
func (v *validator) missingCheck(db *sql.DB, info tableInfo, flavor gtid.Flavor, user string) Check {
	name := "outbox table " + info.name.String()
	var all []schema.TableName
	if err := v.do(func(ctx context.Context) (err error) {
		all, err = visibleTables(ctx, db)
		return err
	}); err != nil {
		return fail(name, "check that the server answers queries on information_schema", "not found, and the other tables cannot be listed: %v", err)
	}
	m := missingTable(info, all, flavor, user)
	if m.allowed(v.cfg.AllowMissingTable) {
		return warn(name, "create it before the application writes to it; the router stops if a table with a name close to it appears first",
			"%s (allowed by --allow-missing-table)", m.detail())
	}
	return because(CauseConfig, fail(name, m.fix(), "%s", m.detail()))
}

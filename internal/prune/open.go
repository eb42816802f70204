package prune

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Conn is where prune connects: the source server with prune's own user,
// which needs SELECT and DELETE on the outbox tables and nothing else.
type Conn struct {
	Addr     string      // host:port
	User     string      // the prune user, not the replication user
	Password string      // its password
	TLS      *tls.Config // nil: plain TCP
}

// Open connects with c and checks the connection. The pool holds one
// connection: prune runs one statement at a time.
func Open(ctx context.Context, c Conn) (*sql.DB, error) {
	dsn := mysql.NewConfig()
	dsn.User, dsn.Passwd, dsn.Net, dsn.Addr = c.User, c.Password, "tcp", c.Addr
	dsn.TLS = c.TLS
	dsn.Timeout = 10 * time.Second
	// Each batch's DELETE under READ COMMITTED takes no gap locks, so it
	// never blocks the application's INSERTs beside the rows it deletes.
	dsn.Params = map[string]string{"transaction_isolation": "'READ-COMMITTED'"}
	if err := checkIsolationVar(ctx, dsn); err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("prune connection settings: %w", err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		var me *mysql.MySQLError
		if errors.As(err, &me) && (me.Number == 1045 || me.Number == 1044) {
			return nil, fmt.Errorf("connecting as prune user %q to %s: %w; create it and grant it SELECT, DELETE on the outbox tables (docs/retention.md), and give its password in %s",
				c.User, c.Addr, err, "BINLOG_ROUTER_PRUNE_MYSQL_PASSWORD or --prune-mysql-password-file")
		}
		return nil, fmt.Errorf("connecting as prune user %q to %s: %w", c.User, c.Addr, err)
	}
	return db, nil
}

// checkIsolationVar picks the session variable of the isolation level:
// transaction_isolation (MySQL 8, MariaDB 11.1+) or tx_isolation (MariaDB
// before 11.1, where the new name is unknown).
func checkIsolationVar(ctx context.Context, dsn *mysql.Config) error {
	probe := *dsn
	probe.Params = nil
	connector, err := mysql.NewConnector(&probe)
	if err != nil {
		return fmt.Errorf("prune connection settings: %w", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	var level string
	if err := db.QueryRowContext(ctx, "SELECT @@session.transaction_isolation").Scan(&level); err != nil {
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Number == 1193 { // unknown system variable
			dsn.Params = map[string]string{"tx_isolation": "'READ-COMMITTED'"}
		}
		// Any other error: Open's ping reports the connection's.
	}
	return nil
}

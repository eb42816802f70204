package checkpoint

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/binlog"
)

// binlogConnectionSign looks on the source for the binlog connection of
// the router whose replica id is serverID, as ActiveSigns's last sign. It
// returns the sign when one is found and a warning when it could not
// look:
//
//   - with the privilege to list the replicas (REPLICATION SLAVE on MySQL
//     and on MariaDB before 10.5, REPLICATION MASTER ADMIN on MariaDB
//     10.5+), a replica registered with serverID is the sign: the
//     router's connection, whichever user it connects as;
//   - without it, db's own user's connections that stream the binlog
//     ("Binlog Dump", "Binlog Dump GTID" in SHOW PROCESSLIST, which shows
//     a user its own connections without the PROCESS privilege) are the
//     sign. The router connects as the same user as checkpoint set (both
//     take --mysql-user), so its connection is among them; so would be
//     another router's or replica's that connects as that user, which
//     the process list cannot tell apart (it does not show replica ids),
//     and the sign says so.
//
// checkpoint set's own binlog connection (CheckServable's probe) is not
// among them: the replication client ends a stream by killing its server
// thread (KILL from a second connection), and a killed thread shows the
// command "Killed".
func binlogConnectionSign(ctx context.Context, db *sql.DB, serverID uint32) (sign, warning string) {
	hosts, err := replicasWithID(ctx, db, serverID)
	if err == nil {
		if len(hosts) > 0 {
			sign = fmt.Sprintf("a replica with its --server-id %d is connected to the source (%s)", serverID, strings.Join(hosts, ", "))
		}
		return sign, ""
	}
	user, conns, perr := binlogDumps(ctx, db)
	switch {
	case perr != nil:
		return "", fmt.Sprintf("cannot list the source's replicas (%v) nor its own connections (%v): the router's binlog connection was not looked for", err, perr)
	case len(conns) > 0:
		return fmt.Sprintf("its source user %s has a binlog connection open (%s): the router's, or another router's or replica's that connects as %s; the replica ids that tell them apart are not visible to this user (%v)",
			user, strings.Join(conns, ", "), user, err), ""
	}
	return "", ""
}

// replicasWithID lists the "host:port" of the replicas registered on the
// source with serverID: SHOW SLAVE HOSTS (MariaDB, MySQL before 8.4), else
// SHOW REPLICAS (MySQL 8.0.22+; 8.4 no longer parses SHOW SLAVE HOSTS).
// Both need REPLICATION SLAVE on MySQL, which the router needs to stream
// the binlog anyway; MariaDB 10.5+ asks REPLICATION MASTER ADMIN. When
// both fail, the error is the first statement's (MariaDB does not parse
// SHOW REPLICAS).
func replicasWithID(ctx context.Context, db *sql.DB, serverID uint32) ([]string, error) {
	var firstErr error
	for _, q := range []string{"SHOW SLAVE HOSTS", "SHOW REPLICAS"} {
		rows, err := binlog.QueryRows(ctx, db, q)
		if err == nil {
			var hosts []string
			for _, row := range rows {
				if row["server_id"] == fmt.Sprint(serverID) {
					hosts = append(hosts, row["host"]+":"+row["port"])
				}
			}
			return hosts, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// binlogDumps lists the connections of db's user that stream the binlog,
// as "connection ID from HOST", with the user's name. SHOW PROCESSLIST
// needs no privilege for the user's own connections (MySQL and MariaDB
// match them by user name, whatever the host).
func binlogDumps(ctx context.Context, db *sql.DB) (user string, conns []string, err error) {
	if err := db.QueryRowContext(ctx, "SELECT SUBSTRING_INDEX(USER(), '@', 1)").Scan(&user); err != nil {
		return "", nil, err
	}
	rows, err := binlog.QueryRows(ctx, db, "SHOW PROCESSLIST")
	if err != nil {
		return "", nil, err
	}
	for _, row := range rows {
		// A killed connection shows the command "Killed" until its
		// thread ends.
		if row["user"] != user || (row["command"] != "Binlog Dump" && row["command"] != "Binlog Dump GTID") {
			continue
		}
		conns = append(conns, fmt.Sprintf("connection %s from %s", row["id"], row["host"]))
	}
	return user, conns, nil
}

package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// brokerMessageMaxBytes is the brokers' message.max.bytes: large enough for
// the large-payload stage's record batches.
func brokerMessageMaxBytes(o *options) int { return max(16<<20, 4*o.BigPayload) }

// env is the world of one run: the router binary, a private mariadbd, a
// broker process (kfake or Apache Kafka, -kafka) and the benchmark
// database.
type env struct {
	root      string // module root
	tmp       string
	routerBin string
	maria     *devenv.MariaDB
	kafka     *kafkaSide
	admin     *admin
	db        *sql.DB // the benchmark database, for loaders
	mariaPid  int
	log       zerolog.Logger
	nextID    int // for unique router names, prefixes and server ids

	extraRouterArgs []string // options.RouterArgs, added to every router run
}

// setup builds the binaries and starts the servers. On error everything
// started so far is stopped.
func setup(ctx context.Context, o *options, log zerolog.Logger) (e *env, err error) {
	e = &env{log: log, extraRouterArgs: o.RouterArgs}
	defer func() {
		if err != nil {
			e.Close()
			e = nil
		}
	}()
	if e.root, err = moduleRoot(ctx); err != nil {
		return e, err
	}
	if e.tmp, err = os.MkdirTemp("", "binlog-router-bench-"); err != nil {
		return e, fmt.Errorf("creating temp dir: %w", err)
	}
	log.Info().Str("dir", e.tmp).Msg("building binlog-router")
	e.routerBin = filepath.Join(e.tmp, "binlog-router")
	if err = goBuild(ctx, e.root, "./cmd/binlog-router", e.routerBin); err != nil {
		return e, err
	}

	log.Info().Msg("starting mariadbd")
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	e.maria, err = devenv.StartMariaDB(startCtx, devenv.MariaDBConfig{ExtraArgs: []string{
		"--innodb-buffer-pool-size=2G",
		"--innodb-log-file-size=1G",
		"--innodb-log-buffer-size=64M",
		"--max-allowed-packet=64M",
		"--max-connections=1000",
		"--binlog-cache-size=4M",
		"--max-binlog-size=1G",
	}})
	if err != nil {
		return e, fmt.Errorf("starting mariadbd: %w", err)
	}
	if err = e.createSchema(ctx); err != nil {
		return e, err
	}

	log.Info().Str("kafka", o.Kafka).Msg("starting the broker")
	if e.kafka, err = startKafkaSide(ctx, e, o); err != nil {
		return e, err
	}
	if e.admin, err = newAdmin(e.kafka.Brokers); err != nil {
		return e, err
	}
	if err = e.admin.setMessageMaxBytes(ctx, brokerMessageMaxBytes(o)); err != nil {
		return e, err
	}
	log.Info().Str("mysql", e.maria.Addr()).Strs("brokers", e.kafka.Brokers).Str("kafka", e.kafka.Desc).Msg("servers ready")
	return e, nil
}

// createSchema creates the benchmark database, the outbox table and the
// non-outbox table, and notes mariadbd's pid for CPU accounting.
func (e *env) createSchema(ctx context.Context) error {
	root, err := e.maria.DB("")
	if err != nil {
		return err
	}
	defer root.Close()
	if _, err := root.ExecContext(ctx, "CREATE DATABASE "+benchDB); err != nil {
		return fmt.Errorf("creating database %s: %w", benchDB, err)
	}
	var pidFile string
	if err := root.QueryRowContext(ctx, "SELECT @@pid_file").Scan(&pidFile); err == nil {
		if b, err := os.ReadFile(pidFile); err == nil {
			e.mariaPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if e.db, err = e.maria.DB(benchDB); err != nil {
		return err
	}
	e.db.SetMaxIdleConns(256)
	ddl, err := schema.DDL(schema.FlavorMariaDB, outboxTable, schema.DefaultColumns())
	if err != nil {
		return fmt.Errorf("outbox DDL: %w", err)
	}
	for _, q := range []string{ddl, otherDDL} {
		if _, err := e.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("creating tables: %w", err)
		}
	}
	return nil
}

// serverPids names the processes whose CPU a run accounts besides the
// router.
func (e *env) serverPids() map[string]int {
	pids := map[string]int{"broker": e.kafka.Pid()}
	if e.mariaPid > 0 {
		pids["mariadbd"] = e.mariaPid
	}
	return pids
}

// unique returns a fresh name with prefix, for router names and topic
// prefixes.
func (e *env) unique(prefix string) string {
	e.nextID++
	return fmt.Sprintf("%s%d", prefix, e.nextID)
}

// serverID returns a fresh replica server id.
func (e *env) serverID() int {
	e.nextID++
	return 5000 + e.nextID
}

// Close stops everything setup started and removes the temp dir.
func (e *env) Close() {
	var errs []error
	if e.admin != nil {
		e.admin.Close()
	}
	if e.db != nil {
		errs = append(errs, e.db.Close())
	}
	if e.kafka != nil {
		e.kafka.Close()
	}
	if e.maria != nil {
		errs = append(errs, e.maria.Close())
	}
	if e.tmp != "" {
		errs = append(errs, os.RemoveAll(e.tmp))
	}
	if err := errors.Join(errs...); err != nil {
		e.log.Warn().Err(err).Msg("cleaning up")
	}
}

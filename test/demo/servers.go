package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// routerPkg is built rather than run with `go run`, so that the demo signals
// the router itself and not a go command in between.
const routerPkg = "github.com/binlog-router/binlog-router/cmd/binlog-router"

// servers is everything the demo starts before the router: a private
// MariaDB, an in-process Kafka and the router binary.
type servers struct {
	maria     *devenv.MariaDB
	kafka     *devenv.Kafka
	dir       string // temporary directory holding the router binary
	routerBin string
}

// startServers starts MariaDB and Kafka (kfake in-process, or a private
// Apache Kafka node when apache is set) and builds the router, all three at
// once since the build dominates on a cold Go cache. Whatever started is
// returned even on error, for close.
func startServers(ctx context.Context, apache bool) (*servers, error) {
	s := &servers{}
	dir, err := os.MkdirTemp("", "binlog-router-demo-")
	if err != nil {
		return s, fmt.Errorf("creating temp dir: %w", err)
	}
	s.dir = dir
	s.routerBin = filepath.Join(dir, "binlog-router")

	if !mariadbInstalled() {
		out.note("mariadbd not found: installing mariadb-server with apt-get (first run only, takes a while)")
	}
	out.note("go build ./cmd/binlog-router meanwhile (the first run compiles all dependencies)")
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		start := time.Now()
		if err := devenv.EnsureMariaDBInstalled(gctx); err != nil {
			return err
		}
		startCtx, cancel := context.WithTimeout(gctx, mariadbTimeout)
		defer cancel()
		m, err := devenv.StartMariaDB(startCtx, devenv.MariaDBConfig{})
		if err != nil {
			return err
		}
		s.maria = m
		var version string
		if err := queryVersion(startCtx, m, &version); err != nil {
			return err
		}
		out.ok("%-8s %s  %s", "mariadb", m.Addr(),
			out.paint(dim, fmt.Sprintf("private mariadbd %s, ready in %s", version, since(start))))
		return nil
	})
	g.Go(func() error {
		start := time.Now()
		if apache {
			return s.startApache(gctx, start)
		}
		k, err := devenv.StartKfake()
		if err != nil {
			return err
		}
		s.kafka = k
		out.ok("%-8s %s  %s", "kafka", strings.Join(k.Brokers, ","),
			out.paint(dim, fmt.Sprintf("in-process kfake, 3 partitions per topic, auto-create on, ready in %s", since(start))))
		return nil
	})
	g.Go(func() error {
		start := time.Now()
		cmd := exec.CommandContext(gctx, "go", "build", "-o", s.routerBin, routerPkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building the router (go build %s): %w\n%s", routerPkg, err, b)
		}
		out.ok("%-8s %s  %s", "router", s.routerBin, out.paint(dim, "built in "+since(start)))
		return nil
	})
	return s, g.Wait()
}

// startApache fetches Apache Kafka's jars with Maven (first run only) and
// starts one private KRaft node.
func (s *servers) startApache(ctx context.Context, start time.Time) error {
	out.note("fetching Apache Kafka %s with Maven when not cached yet, then starting one KRaft node", devenv.KafkaVersion())
	startCtx, cancel := context.WithTimeout(ctx, apacheTimeout)
	defer cancel()
	a, err := devenv.StartApacheKafka(startCtx, devenv.ApacheKafkaConfig{})
	if err != nil {
		return err
	}
	s.kafka = &devenv.Kafka{Brokers: a.Brokers(), Apache: a}
	out.ok("%-8s %s  %s", "kafka", strings.Join(a.Brokers(), ","),
		out.paint(dim, fmt.Sprintf("private Apache Kafka %s (one KRaft node), 3 partitions per topic, ready in %s", a.Version(), since(start))))
	return nil
}

// close stops MariaDB and Kafka and removes the temporary directories.
func (s *servers) close() error {
	var errs []error
	if s.kafka != nil {
		s.kafka.Close()
	}
	if s.maria != nil {
		errs = append(errs, s.maria.Close())
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// mariadbInstalled is a quick look, only to tell the user why the first
// run may be slow; devenv.EnsureMariaDBInstalled decides.
func mariadbInstalled() bool {
	if _, err := exec.LookPath("mariadbd"); err == nil {
		return true
	}
	_, err := os.Stat("/usr/sbin/mariadbd")
	return err == nil
}

func queryVersion(ctx context.Context, m *devenv.MariaDB, version *string) error {
	db, err := m.DB("")
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(version); err != nil {
		return fmt.Errorf("reading mariadb version: %w", err)
	}
	*version, _, _ = strings.Cut(*version, "-") // "11.8.3-MariaDB-log" → "11.8.3"
	return nil
}

// since formats the time elapsed since start, rounded for people.
func since(start time.Time) string {
	d := time.Since(start)
	if d < time.Millisecond {
		return "<1ms"
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

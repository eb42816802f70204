// Command demo shows binlog-router end to end in under a minute: a private
// MariaDB, an in-process Kafka, the real router binary, an app writing
// orders and outbox rows in transactions, and a read_committed consumer
// printing what arrives. Run it with `make demo`; `make demo-apache` (the
// -kafka=apache flag) runs the same on a private Apache Kafka node instead
// of the in-process Kafka, which needs Java and Maven.
//
// It exits non-zero, saying why, if any step fails or any record is
// missing, duplicated or came from a rolled-back transaction.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Deadlines. Each wait polls and fails with a message when its deadline
// passes. apt-get and go build have none: on a fresh machine they take what
// they take, and ^C stops them.
const (
	mariadbTimeout    = 90 * time.Second // a cold datadir install plus startup
	connectTimeout    = 20 * time.Second
	deliveryTimeout   = 30 * time.Second
	checkpointTimeout = 15 * time.Second
	shutdownTimeout   = 15 * time.Second
	apacheTimeout     = 5 * time.Minute // Maven's first download of the Kafka jars, then the node's start
)

func main() {
	kafka := flag.String("kafka", "kfake", "the Kafka to run on: kfake (in-process) or apache (a private Apache Kafka node; needs Java and Maven)")
	flag.Parse()
	if *kafka != "kfake" && *kafka != "apache" {
		fmt.Fprintf(os.Stderr, "demo: -kafka=%s: use kfake or apache\n", *kafka)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	err := run(ctx, *kafka == "apache")
	if err != nil && ctx.Err() != nil {
		out.printf("\n%s", out.paint(bold+";"+yellow, "interrupted; everything the demo started is stopped and removed"))
		os.Exit(130)
	}
	if err != nil {
		out.printf("\n%s %v", out.paint(bold+";"+red, "✗ demo failed:"), err)
		os.Exit(1)
	}
	out.printf("\n%s", out.paint(bold+";"+green, "✓ demo finished in "+since(start)))
}

func run(ctx context.Context, apache bool) (err error) {
	out.printf("%s", out.paint(bold, "binlog-router demo: outbox rows from the MariaDB binlog to Kafka, in transactions"))

	kafkaName := "an in-process Kafka"
	if apache {
		kafkaName = "a private Apache Kafka"
	}
	out.section("1. Start a private MariaDB and " + kafkaName + ", build the router")
	srv, err := startServers(ctx, apache)
	defer func() {
		if cerr := srv.close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleaning up: %w", cerr))
		} else if err == nil {
			out.ok("stopped mariadbd and kafka, removed temp dirs")
		}
	}()
	if err != nil {
		return err
	}

	out.section("2. Create database shop: the outbox table and the app's orders table")
	db, err := createShop(ctx, srv.maria)
	if err != nil {
		return err
	}
	defer db.Close()

	out.section("3. Start the router")
	r, err := startRouter(srv.routerBin, srv.maria.Addr(), srv.kafka.Brokers)
	if err != nil {
		return err
	}
	defer r.kill() // after an error; a no-op once stopped
	if err := r.waitStreaming(ctx, db, connectTimeout); err != nil {
		return err
	}
	out.ok("router is connected to mariadb as a replica (SHOW PROCESSLIST: Binlog Dump)")

	out.section("4. The app writes orders and their events, each in one transaction")
	w, err := writeTransactions(ctx, db, sampleTransactions())
	if err != nil {
		return err
	}

	out.section("5. A read_committed consumer reads " + topicRegex)
	recs, err := consumeAll(ctx, srv.kafka.Brokers, w.committed, r.exited, deliveryTimeout)
	if err != nil {
		return err
	}
	printRecords(recs, w)
	t, err := check(recs, w)
	if err != nil {
		return err
	}

	out.section("6. The checkpoint, stored in Kafka with the records")
	if err := waitCheckpoint(ctx, srv.kafka.Brokers, w.lastGTID, checkpointTimeout); err != nil {
		return err
	}
	shown, err := showCheckpoint(ctx, srv.routerBin, srv.kafka.Brokers)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(shown, "\n"), "\n") {
		out.printf("  %s", line)
	}
	out.printf("\n  %s", out.paint(bold+";"+green, fmt.Sprintf("%d events routed, %d rolled-back rows seen, checkpoint at %s",
		t.routed, t.rolledBack, w.lastGTID)))

	out.section("7. An inbox consumer applies the events once, and skips a redelivery")
	if err := demoInbox(ctx, srv.kafka.Brokers, db, w); err != nil {
		return err
	}

	out.section("8. Stop the router with SIGTERM")
	stopped := time.Now()
	code, err := r.stop(shutdownTimeout)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("router exited with code %d after SIGTERM; want 0", code)
	}
	out.ok("router exited 0 after %s", since(stopped))
	return nil
}

// Command inboxconsumer is the child process of the inbox kill tests: an
// inbox consumer whose handler appends one row per event to a table
// without a unique key, so a side effect applied twice shows as two rows.
// With -kill it SIGKILLs itself in one window: "handler" (after the
// handler, before COMMIT), "commit" (after COMMIT, before the offset
// commit) or "revoke" (when partitions are revoked in a rebalance). It
// prints "duplicate <id>" for each skipped duplicate and stops on SIGTERM.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
)

func main() {
	dialect := flag.String("dialect", "mysql", "mysql or postgresql")
	dsn := flag.String("dsn", "", "database DSN")
	brokers := flag.String("brokers", "", "comma separated brokers")
	topic := flag.String("topic", "", "topic")
	name := flag.String("name", "effects", "consumer name and group")
	kill := flag.String("kill", "", "handler, commit or revoke")
	killAt := flag.Int("kill-at", 1, "kill at the Nth event of this process (handler, commit)")
	delay := flag.Duration("delay", 0, "handler delay per event")
	flag.Parse()
	if err := run(*dialect, *dsn, *brokers, *topic, *name, *kill, *killAt, *delay); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func die() { _ = syscall.Kill(os.Getpid(), syscall.SIGKILL) }

func run(dialect, dsn, brokers, topic, name, kill string, killAt int, delay time.Duration) error {
	d, driver, ph := inbox.MySQL, "mysql", "?"
	if dialect == "postgresql" {
		d, driver, ph = inbox.PostgreSQL, "pgx", "$1"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var n atomic.Int64
	c, err := inbox.New(inbox.Config{
		Brokers: strings.Split(brokers, ","), Topics: []string{topic}, ConsumerName: name,
		DB: db, Dialect: d,
		Handler: func(ctx context.Context, tx *sql.Tx, ev inbox.Event) error {
			if _, err := tx.ExecContext(ctx, "INSERT INTO effects (event_id) VALUES ("+ph+")", ev.ID); err != nil {
				return err
			}
			time.Sleep(delay)
			if kill == "handler" && n.Add(1) == int64(killAt) {
				die()
			}
			return nil
		},
		InitialBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
		CommitInterval: 100 * time.Millisecond,
		// Short sessions so that a killed member's partitions move on soon
		// (the test brokers allow them: kfake.GroupMinSessionTimeout,
		// group.min.session.timeout.ms on Apache Kafka).
		KafkaOptions: []kgo.Opt{kgo.SessionTimeout(time.Second), kgo.HeartbeatInterval(200 * time.Millisecond)},
		Hooks: inbox.Hooks{
			AfterCommit: func(inbox.Event) {
				if kill == "commit" && n.Add(1) == int64(killAt) {
					die()
				}
			},
			OnDuplicate: func(ev inbox.Event) { fmt.Printf("duplicate %s\n", ev.ID) },
			OnRevoked: func(revoked map[string][]int32) {
				if kill == "revoke" && len(revoked) > 0 {
					die()
				}
			},
		},
	})
	if err != nil {
		return err
	}
	return c.Run(ctx)
}

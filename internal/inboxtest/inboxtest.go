// Package inboxtest holds what the tests of the inbox library and the
// router's end-to-end inbox tests share: the databases a consumer runs
// against (a private MariaDB and PostgreSQL from internal/devenv), a
// consumer running in the background, a plain producer of input records
// and the topics' end offsets. It is imported by tests only.
package inboxtest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/devenv"
)

// DB is one database the consumer tests run against.
type DB struct {
	Name    string
	Dialect inbox.Dialect
	Open    func(t *testing.T) *sql.DB
	PH      func(n int) string // placeholder n (1-based)
}

// OpenInbox opens a new database of d with the inbox table in it.
func (d DB) OpenInbox(t *testing.T) *sql.DB {
	t.Helper()
	db := d.Open(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := inbox.CreateTable(ctx, db, d.Dialect, ""); err != nil {
		t.Fatal(err)
	}
	return db
}

// Databases are MariaDB and PostgreSQL.
func Databases() []DB { return []DB{MariaDB(), Postgres()} }

// MariaDB is a database "shop" on a private MariaDB server.
func MariaDB() DB {
	return DB{"mariadb", inbox.MySQL, func(t *testing.T) *sql.DB {
		return devenv.CreateDatabase(t, devenv.NewMariaDB(t, devenv.MariaDBConfig{}), "shop")
	}, func(int) string { return "?" }}
}

// Postgres is a database "shop" on a private PostgreSQL server.
func Postgres() DB {
	return DB{"postgresql", inbox.PostgreSQL, func(t *testing.T) *sql.DB {
		return devenv.CreatePostgresDatabase(t, devenv.NewPostgres(t), "shop")
	}, func(n int) string { return fmt.Sprintf("$%d", n) }}
}

// Unique names a topic, group or consumer for one test: the Apache Kafka
// passes share one broker between tests.
func Unique(base string) string { return base + "-" + uuid.NewString()[:8] }

// Running is a Consumer whose Run runs in a goroutine.
type Running struct {
	*inbox.Consumer
	cancel context.CancelFunc
	done   chan error
}

// Start creates a consumer from cfg and runs it until Stop (or the test's
// cleanup).
func Start(t *testing.T, cfg inbox.Config) *Running {
	t.Helper()
	c, err := inbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{Consumer: c, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// Stop ends Run and returns its error.
func (r *Running) Stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("inbox consumer did not stop within 60s")
		return nil
	}
}

// MustExec runs q on db or fails the test.
func MustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// ProduceRecords produces recs, asking the brokers to create their topics
// (with the brokers' default partition count: three on kfake and on the
// tests' Apache Kafka).
func ProduceRecords(t *testing.T, brokers []string, recs []*kgo.Record, opts ...kgo.Opt) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// EndOffsets are topic's end offsets by partition.
func EndOffsets(t *testing.T, brokers []string, topic string) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lo, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[o.Partition] = o.Offset
		}
	})
	return out
}

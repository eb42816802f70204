package test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/inbox"
	"github.com/binlog-router/binlog-router/internal/devenv"
)

// inboxDB is one database the inbox tests run against.
type inboxDB struct {
	name    string
	dialect inbox.Dialect
	open    func(t *testing.T) *sql.DB
	ph      func(n int) string // placeholder n (1-based)
}

// openInbox opens a new database of d with the inbox table in it.
func (d inboxDB) openInbox(t *testing.T) *sql.DB {
	t.Helper()
	db := d.open(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := inbox.CreateTable(ctx, db, d.dialect, ""); err != nil {
		t.Fatal(err)
	}
	return db
}

func inboxDatabases() []inboxDB {
	return []inboxDB{inboxMariaDB(), inboxPostgres()}
}

func inboxMariaDB() inboxDB {
	return inboxDB{"mariadb", inbox.MySQL, func(t *testing.T) *sql.DB {
		return devenv.CreateDatabase(t, devenv.NewMariaDB(t, devenv.MariaDBConfig{}), "shop")
	}, func(int) string { return "?" }}
}

func inboxPostgres() inboxDB {
	return inboxDB{"postgresql", inbox.PostgreSQL, func(t *testing.T) *sql.DB {
		return devenv.CreatePostgresDatabase(t, devenv.NewPostgres(t), "shop")
	}, func(n int) string { return fmt.Sprintf("$%d", n) }}
}

// unique names a topic, group or consumer for one test: the Apache Kafka
// pass shares one broker between all tests.
func unique(base string) string { return base + "-" + uuid.NewString()[:8] }

// runningInbox is a Consumer whose Run runs in a goroutine.
type runningInbox struct {
	*inbox.Consumer
	cancel context.CancelFunc
	done   chan error
}

// startInbox creates a consumer from cfg and runs it until stop (or the
// test's cleanup).
func startInbox(t *testing.T, cfg inbox.Config) *runningInbox {
	t.Helper()
	c, err := inbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningInbox{Consumer: c, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// stop ends Run and returns its error.
func (r *runningInbox) stop(t *testing.T) error {
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

func mustExec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// produceRecords produces recs, asking the brokers to create their topics
// (with the brokers' default partition count: three on kfake and on the
// test's Apache Kafka).
func produceRecords(t *testing.T, brokers []string, recs []*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.AllowAutoTopicCreation())
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

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// endOffsets are topic's end offsets by partition.
func endOffsets(t *testing.T, brokers []string, topic string) map[int32]int64 {
	t.Helper()
	adm := newAdmin(t, brokers)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lo, err := adm.ListEndOffsets(ctx, topic)
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

package test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// env is one test's world: a private MariaDB, a Kafka, an outbox table.
type env struct {
	t      testing.TB
	maria  *devenv.MariaDB
	kafka  *devenv.Kafka
	db     *sql.DB
	dbName string
	prefix string // topic prefix unique to the test
	// routerBrokers, when set, are the brokers the router and the CLI
	// commands use instead of kafka.Brokers (a proxy in front of them).
	routerBrokers []string
	// proxy is the kafkaProxy the router reaches its broker through, if any.
	proxy *kafkaProxy
}

type envOpts struct {
	maria devenv.MariaDBConfig
	kfake []kfake.Opt
	// kafka, when set, is the Kafka of the test instead of devenv.NewKafka's
	// (a private or shared Apache Kafka cluster).
	kafka func(t testing.TB) *devenv.Kafka
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	e := &env{t: t, dbName: "shop"}
	e.maria = devenv.NewMariaDB(t, o.maria)
	if o.kafka != nil {
		e.kafka = o.kafka(t)
	} else {
		e.kafka = devenv.NewKafka(t, o.kfake...)
	}
	e.db = devenv.CreateDatabase(t, e.maria, e.dbName)
	e.prefix = "t" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	ddl, err := schema.DDL("mariadb", "outbox", schema.DefaultColumns())
	if err != nil {
		t.Fatal(err)
	}
	e.exec(ddl)
	e.exec("CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(64), total DECIMAL(10,2))")
	return e
}

func (e *env) exec(q string, args ...any) {
	e.t.Helper()
	if _, err := e.db.Exec(q, args...); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

// args are the router flags for this env.
func (e *env) args(name string, extra ...string) []string {
	return append([]string{
		"--mysql-addr", e.maria.Addr(),
		"--mysql-user", "root",
		"--kafka-brokers", strings.Join(e.routerKafka(), ","),
		"--outbox-table", e.dbName + ".outbox",
		"--topic-template", e.prefix + ".{event_type}",
		"--checkpoint-topic", e.checkpointTopic(),
		"--name", name,
		"--log-format", "json",
		"--server-id", fmt.Sprint(2000 + time.Now().UnixNano()%10000),
	}, extra...)
}

// routerKafka are the brokers the router is given.
func (e *env) routerKafka() []string {
	if e.routerBrokers != nil {
		return e.routerBrokers
	}
	return e.kafka.Brokers
}

func (e *env) topicRegex() string { return "^" + e.prefix + `\..*` }

// event is one outbox row as the tests write it.
type event struct {
	ID, AggType, AggID, Type string
	Payload                  *string
	SchemaVersion            *int
	Traceparent              *string
	Headers                  *string
}

func newEvent(aggID, typ, payload string) event {
	p := payload
	return event{ID: uuid.NewString(), AggType: "order", AggID: aggID, Type: typ, Payload: &p}
}

// insertTx writes events (and one business row) in one transaction.
func (e *env) insertTx(evs ...event) {
	e.t.Helper()
	tx, err := e.db.Begin()
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO orders (customer, total) VALUES (?, ?)", "c", 1.5); err != nil {
		e.t.Fatal(err)
	}
	for _, ev := range evs {
		if err := insertEvent(tx, ev); err != nil {
			_ = tx.Rollback()
			e.t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
}

type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func insertEvent(x execer, ev event) error {
	_, err := x.ExecContext(context.Background(),
		"INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload, schema_version, traceparent, headers) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		ev.ID, ev.AggType, ev.AggID, ev.Type, ev.Payload, ev.SchemaVersion, ev.Traceparent, ev.Headers)
	return err
}

// kafkaClient is a client of brokers, closed when the test ends.
func kafkaClient(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// newAdmin is an admin client of brokers, closed when the test ends.
func newAdmin(t testing.TB, brokers []string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(kafkaClient(t, brokers))
}

// kafkaClient is a client of the env's Kafka, closed when the test ends.
func (e *env) kafkaClient(opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	return kafkaClient(e.t, e.kafka.Brokers, opts...)
}

// admin is an admin client of the env's Kafka, closed when the test ends.
func (e *env) admin() *kadm.Client {
	e.t.Helper()
	return newAdmin(e.t, e.kafka.Brokers)
}

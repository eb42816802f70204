package harness

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

// Env is one test's world: a private MariaDB, a Kafka, an outbox table.
type Env struct {
	T      testing.TB
	Maria  *devenv.MariaDB
	Kafka  *devenv.Kafka
	DB     *sql.DB
	DBName string
	Prefix string // topic prefix unique to the test
	// routerBrokers, when set, are the brokers the router and the CLI
	// commands use instead of kafka.Brokers (a proxy in front of them).
	routerBrokers []string
	// Proxy is the KafkaProxy the router reaches its broker through, if any.
	Proxy *KafkaProxy
}

// EnvOpts configures NewEnv; the zero value is a default MariaDB and a
// kfake of the test.
type EnvOpts struct {
	Maria devenv.MariaDBConfig
	KFake []kfake.Opt
	// Kafka, when set, is the Kafka of the test instead of devenv.NewKafka's
	// (a private or shared Apache Kafka cluster).
	Kafka func(t testing.TB) *devenv.Kafka
}

// NewEnv starts the servers of one test (a private MariaDB, the Kafka
// o names) and creates database shop with its outbox and orders tables
// and a topic prefix unique to the test; all are removed at its end.
func NewEnv(t testing.TB, o EnvOpts) *Env {
	t.Helper()
	e := &Env{T: t, DBName: "shop"}
	e.Maria = devenv.NewMariaDB(t, o.Maria)
	if o.Kafka != nil {
		e.Kafka = o.Kafka(t)
	} else {
		e.Kafka = devenv.NewKafka(t, o.KFake...)
	}
	e.DB = devenv.CreateDatabase(t, e.Maria, e.DBName)
	e.Prefix = "t" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	ddl, err := schema.DDL("mariadb", "outbox", schema.DefaultColumns())
	if err != nil {
		t.Fatal(err)
	}
	e.Exec(ddl)
	e.Exec("CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(64), total DECIMAL(10,2))")
	return e
}

// Exec runs q on the test's database, failing the test on error.
func (e *Env) Exec(q string, args ...any) {
	e.T.Helper()
	mustExec(e.T, e.DB, q, args...)
}

// Args are the router flags for this env.
func (e *Env) Args(name string, extra ...string) []string {
	return append([]string{
		"--mysql-addr", e.Maria.Addr(),
		"--mysql-user", "root",
		"--kafka-brokers", strings.Join(e.routerKafka(), ","),
		"--outbox-table", e.DBName + ".outbox",
		"--topic-template", e.Prefix + ".{event_type}",
		"--checkpoint-topic", e.CheckpointTopic(),
		"--name", name,
		"--log-format", "json",
		"--server-id", fmt.Sprint(2000 + time.Now().UnixNano()%10000),
	}, extra...)
}

// routerKafka are the brokers the router is given.
func (e *Env) routerKafka() []string {
	if e.routerBrokers != nil {
		return e.routerBrokers
	}
	return e.Kafka.Brokers
}

// TopicRegex matches every topic under the test's prefix.
func (e *Env) TopicRegex() string { return "^" + e.Prefix + `\..*` }

// Event is one outbox row as the tests write it.
type Event struct {
	ID, AggType, AggID, Type string
	Payload                  *string
	SchemaVersion            *int
	Traceparent              *string
	Headers                  *string
}

// NewEvent is an order event with a fresh id.
func NewEvent(aggID, typ, payload string) Event {
	p := payload
	return Event{ID: uuid.NewString(), AggType: "order", AggID: aggID, Type: typ, Payload: &p}
}

// InsertTx writes events (and one business row) in one transaction.
func (e *Env) InsertTx(evs ...Event) {
	e.T.Helper()
	tx, err := e.DB.Begin()
	if err != nil {
		e.T.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO orders (customer, total) VALUES (?, ?)", "c", 1.5); err != nil {
		e.T.Fatal(err)
	}
	for _, ev := range evs {
		if err := InsertEvent(tx, ev); err != nil {
			_ = tx.Rollback()
			e.T.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		e.T.Fatal(err)
	}
}

// Execer is a database, connection or transaction InsertEvent writes through.
type Execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// InsertEvent writes ev as one outbox row through x.
func InsertEvent(x Execer, ev Event) error {
	_, err := x.ExecContext(context.Background(),
		"INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload, schema_version, traceparent, headers) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		ev.ID, ev.AggType, ev.AggID, ev.Type, ev.Payload, ev.SchemaVersion, ev.Traceparent, ev.Headers)
	return err
}

// KafkaClient is a client of brokers, closed when the test ends.
func KafkaClient(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// NewAdmin is an admin client of brokers, closed when the test ends.
func NewAdmin(t testing.TB, brokers []string) *kadm.Client {
	t.Helper()
	return kadm.NewClient(KafkaClient(t, brokers))
}

// KafkaClient is a client of the env's Kafka, closed when the test ends.
func (e *Env) KafkaClient(opts ...kgo.Opt) *kgo.Client {
	e.T.Helper()
	return KafkaClient(e.T, e.Kafka.Brokers, opts...)
}

// Admin is an admin client of the env's Kafka, closed when the test ends.
func (e *Env) Admin() *kadm.Client {
	e.T.Helper()
	return NewAdmin(e.T, e.Kafka.Brokers)
}

// ArgsWith replaces the value of flag in args.
func ArgsWith(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}

// mustExec runs q on db, failing t on error.
func mustExec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

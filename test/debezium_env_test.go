package test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/devenv"
)

// debeziumDir holds the Debezium configuration a user would write: the
// Kafka Connect worker properties and the outbox connectors.
const debeziumDir = "../examples/debezium"

// Debezium's database account, with the grants its MariaDB connector
// documents (BINLOG MONITOR is MariaDB's REPLICATION CLIENT).
const (
	dbzUser     = "debezium"
	dbzPassword = "debezium-secret"
)

// dbzWorld is one Debezium test's world: a private Apache Kafka node, a
// private MariaDB whose database shop has Debezium's outbox table (the DDL
// of `binlog-router schema --preset debezium`) and Debezium's user, and a
// Kafka Connect worker started from the repository's worker properties.
type dbzWorld struct {
	t       *testing.T
	kafka   *devenv.Kafka
	maria   *devenv.MariaDB
	db      *sql.DB
	connect *devenv.Connect
}

// newDebeziumWorld starts the world; workerProps override entries of
// connect-distributed.properties. It skips outside the Apache Kafka pass.
func newDebeziumWorld(t *testing.T, workerProps map[string]string) *dbzWorld {
	t.Helper()
	kafka := privateApache(t, devenv.ApacheKafkaConfig{})
	w := &dbzWorld{t: t, kafka: kafka}
	w.maria = devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	w.db = devenv.CreateDatabase(t, w.maria, "shop")
	ddl := cliRun(t, "schema", "--preset", "debezium", "--flavor", "mariadb", "--table", "outbox")
	if ddl.code != 0 {
		t.Fatalf("binlog-router schema: exit %d: %s", ddl.code, ddl.stderr)
	}
	w.exec(ddl.stdout)
	w.exec("CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(64))")
	w.exec(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", dbzUser, dbzPassword))
	w.exec(fmt.Sprintf("GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '%s'@'%%'", dbzUser))

	props, err := devenv.ReadProperties(filepath.Join(debeziumDir, "connect-distributed.properties"))
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(props, workerProps)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	w.connect, err = devenv.StartConnect(ctx, devenv.ConnectConfig{Brokers: kafka.Brokers, Props: props})
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kafka connect log:\n%s", w.connect.LogTail(120))
		}
		w.connect.Close()
	})
	rel := w.connect.Release()
	t.Logf("kafka connect %s with debezium %s started in %v at %s", rel.Connect, rel.Debezium, time.Since(start).Round(time.Millisecond), w.connect.URL())
	return w
}

func (w *dbzWorld) exec(q string, args ...any) {
	w.t.Helper()
	if _, err := w.db.Exec(q, args...); err != nil {
		w.t.Fatalf("%s: %v", q, err)
	}
}

// connectorConfig loads examples/debezium/<file> (a POST /connectors body)
// and points it at this world's MariaDB and Kafka: only the addresses and
// credentials change.
func (w *dbzWorld) connectorConfig(file string) (string, map[string]string) {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(debeziumDir, file))
	if err != nil {
		w.t.Fatal(err)
	}
	var body struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		w.t.Fatalf("%s: %v", file, err)
	}
	c := body.Config
	c["database.hostname"] = "127.0.0.1"
	c["database.port"] = strconv.Itoa(w.maria.Port())
	c["database.user"] = dbzUser
	c["database.password"] = dbzPassword
	c["schema.history.internal.kafka.bootstrap.servers"] = strings.Join(w.kafka.Brokers, ",")
	return body.Name, c
}

// startConnector creates the connector and waits until its task streams
// the binlog: rows committed after it returns are captured.
func (w *dbzWorld) startConnector(name string, config map[string]string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	before := w.connect.BinlogConnections(config["topic.prefix"])
	if err := w.connect.CreateConnector(ctx, name, config, ""); err != nil {
		w.t.Fatal(err)
	}
	w.waitStreaming(ctx, name, config["topic.prefix"], before)
}

// waitStreaming waits for the connector to be RUNNING and for one more
// "Connected to binlog" line of its task than before.
func (w *dbzWorld) waitStreaming(ctx context.Context, name, prefix string, before int) {
	w.t.Helper()
	if err := w.connect.WaitRunning(ctx, name); err != nil {
		w.t.Fatal(err)
	}
	if err := poll(time.Until(deadlineOf(ctx)), func() bool { return w.connect.BinlogConnections(prefix) > before }); err != nil {
		w.t.Fatalf("connector %s did not connect to the binlog: %v", name, err)
	}
}

func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Minute)
}

// createTopics creates the outbox topics up front, as a deployment without
// automatic topic creation does, with the broker's default partitions.
func (w *dbzWorld) createTopics(topics ...string) {
	w.t.Helper()
	adm := newAdmin(w.t, w.kafka.Brokers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := adm.CreateTopics(ctx, 3, 1, nil, topics...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		w.t.Fatalf("creating topics %v: %v", topics, err)
	}
}

// gtidPos is the server's @@gtid_binlog_pos.
func (w *dbzWorld) gtidPos() string {
	w.t.Helper()
	return gtidPos(w.t, w.db)
}

// routerArgs are the run/checkpoint flags of a router that replaces the
// connector: the same table and topics, --preset debezium.
func (w *dbzWorld) routerArgs(name string, extra ...string) []string {
	return append([]string{
		"--mysql-addr", w.maria.Addr(),
		"--mysql-user", "root",
		"--kafka-brokers", strings.Join(w.kafka.Brokers, ","),
		"--outbox-table", "shop.outbox",
		"--preset", "debezium",
		"--name", name,
		"--log-format", "json",
		"--server-id", fmt.Sprint(3000 + time.Now().UnixNano()%10000),
	}, extra...)
}

// waitRouterCheckpoint polls until the router's checkpoint covers want
// (the GTID sets are equal).
func (w *dbzWorld) waitRouterCheckpoint(name, want string) {
	w.t.Helper()
	checkpointStore{t: w.t, brokers: w.kafka.Brokers, topic: checkpoint.DefaultTopic}.wait(name, want)
}

// waitTaskFailed waits until a task of connector name is FAILED and
// returns its trace.
func (w *dbzWorld) waitTaskFailed(name string) string {
	w.t.Helper()
	var trace string
	err := poll(2*time.Minute, func() bool {
		st, err := w.connect.Status(context.Background(), name)
		if err != nil {
			return false
		}
		for _, task := range st.Tasks {
			if task.State == "FAILED" {
				trace = task.Trace
				return true
			}
		}
		return false
	})
	if err != nil {
		w.t.Fatalf("connector %s: no task failed: %v", name, err)
	}
	return trace
}

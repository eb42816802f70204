package harness

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

// DbzWorld is one Debezium test's world: a private Apache Kafka node, a
// private MariaDB whose database shop has Debezium's outbox table (the DDL
// of `binlog-router schema --preset debezium`) and Debezium's user, and a
// Kafka Connect worker started from the repository's worker properties.
type DbzWorld struct {
	T       *testing.T
	Kafka   *devenv.Kafka
	maria   *devenv.MariaDB
	DB      *sql.DB
	Connect *devenv.Connect
}

// NewDebeziumWorld starts the world; workerProps override entries of
// connect-distributed.properties. It skips outside the Apache Kafka pass.
func NewDebeziumWorld(t *testing.T, workerProps map[string]string) *DbzWorld {
	t.Helper()
	kafka := PrivateApache(t, devenv.ApacheKafkaConfig{})
	w := &DbzWorld{T: t, Kafka: kafka}
	w.maria = devenv.NewMariaDB(t, devenv.MariaDBConfig{})
	w.DB = devenv.CreateDatabase(t, w.maria, "shop")
	ddl := RunCLI(t, "schema", "--preset", "debezium", "--flavor", "mariadb", "--table", "outbox")
	if ddl.Code != 0 {
		t.Fatalf("binlog-router schema: exit %d: %s", ddl.Code, ddl.Stderr)
	}
	w.Exec(ddl.Stdout)
	w.Exec("CREATE TABLE orders (id BIGINT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(64))")
	w.Exec(fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", dbzUser, dbzPassword))
	w.Exec(fmt.Sprintf("GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '%s'@'%%'", dbzUser))

	props, err := devenv.ReadProperties(filepath.Join(debeziumDir, "connect-distributed.properties"))
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(props, workerProps)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	w.Connect, err = devenv.StartConnect(ctx, devenv.ConnectConfig{Brokers: kafka.Brokers, Props: props})
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kafka connect log:\n%s", w.Connect.LogTail(120))
		}
		w.Connect.Close()
	})
	rel := w.Connect.Release()
	t.Logf("kafka connect %s with debezium %s started in %v at %s", rel.Connect, rel.Debezium, time.Since(start).Round(time.Millisecond), w.Connect.URL())
	return w
}

// Exec runs q on the world's database, failing the test on error.
func (w *DbzWorld) Exec(q string, args ...any) {
	w.T.Helper()
	mustExec(w.T, w.DB, q, args...)
}

// ConnectorConfig loads examples/debezium/<file> (a POST /connectors body)
// and points it at this world's MariaDB and Kafka: only the addresses and
// credentials change.
func (w *DbzWorld) ConnectorConfig(file string) (string, map[string]string) {
	w.T.Helper()
	b, err := os.ReadFile(filepath.Join(debeziumDir, file))
	if err != nil {
		w.T.Fatal(err)
	}
	var body struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
	}
	if err := json.Unmarshal(b, &body); err != nil {
		w.T.Fatalf("%s: %v", file, err)
	}
	c := body.Config
	c["database.hostname"] = "127.0.0.1"
	c["database.port"] = strconv.Itoa(w.maria.Port())
	c["database.user"] = dbzUser
	c["database.password"] = dbzPassword
	c["schema.history.internal.kafka.bootstrap.servers"] = strings.Join(w.Kafka.Brokers, ",")
	return body.Name, c
}

// StartConnector creates the connector and waits until its task streams
// the binlog: rows committed after it returns are captured.
func (w *DbzWorld) StartConnector(name string, config map[string]string) {
	w.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	before := w.Connect.BinlogConnections(config["topic.prefix"])
	if err := w.Connect.CreateConnector(ctx, name, config, ""); err != nil {
		w.T.Fatal(err)
	}
	w.waitStreaming(ctx, name, config["topic.prefix"], before)
}

// waitStreaming waits for the connector to be RUNNING and for one more
// "Connected to binlog" line of its task than before.
func (w *DbzWorld) waitStreaming(ctx context.Context, name, prefix string, before int) {
	w.T.Helper()
	if err := w.Connect.WaitRunning(ctx, name); err != nil {
		w.T.Fatal(err)
	}
	if err := Poll(time.Until(deadlineOf(ctx)), func() bool { return w.Connect.BinlogConnections(prefix) > before }); err != nil {
		w.T.Fatalf("connector %s did not connect to the binlog: %v", name, err)
	}
}

func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Minute)
}

// CreateTopics creates the outbox topics up front, as a deployment without
// automatic topic creation does, with the broker's default partitions.
func (w *DbzWorld) CreateTopics(topics ...string) {
	w.T.Helper()
	adm := NewAdmin(w.T, w.Kafka.Brokers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := adm.CreateTopics(ctx, 3, 1, nil, topics...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		w.T.Fatalf("creating topics %v: %v", topics, err)
	}
}

// GTIDPos is the server's @@gtid_binlog_pos.
func (w *DbzWorld) GTIDPos() string {
	w.T.Helper()
	return GTIDPos(w.T, w.DB)
}

// RouterArgs are the run/checkpoint flags of a router that replaces the
// connector: the same table and topics, --preset debezium.
func (w *DbzWorld) RouterArgs(name string, extra ...string) []string {
	return append([]string{
		"--mysql-addr", w.maria.Addr(),
		"--mysql-user", "root",
		"--kafka-brokers", strings.Join(w.Kafka.Brokers, ","),
		"--outbox-table", "shop.outbox",
		"--preset", "debezium",
		"--name", name,
		"--log-format", "json",
		"--server-id", fmt.Sprint(3000 + time.Now().UnixNano()%10000),
	}, extra...)
}

// WaitRouterCheckpoint polls until the router's checkpoint covers want
// (the GTID sets are equal).
func (w *DbzWorld) WaitRouterCheckpoint(name, want string) {
	w.T.Helper()
	checkpointStore{t: w.T, brokers: w.Kafka.Brokers, topic: checkpoint.DefaultTopic}.wait(name, want)
}

// WaitTaskFailed waits until a task of connector name is FAILED and
// returns its trace.
func (w *DbzWorld) WaitTaskFailed(name string) string {
	w.T.Helper()
	var trace string
	err := Poll(2*time.Minute, func() bool {
		st, err := w.Connect.Status(context.Background(), name)
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
		w.T.Fatalf("connector %s: no task failed: %v", name, err)
	}
	return trace
}

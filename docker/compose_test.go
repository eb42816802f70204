package docker_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/binlog-router/binlog-router/internal/schema"
)

// composeFile is the part of compose.yaml the tests read.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Restart     string            `yaml:"restart"`
	Build       *struct {
		Context    string            `yaml:"context"`
		Dockerfile string            `yaml:"dockerfile"`
		Args       map[string]string `yaml:"args"`
	} `yaml:"build"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	require.NoError(t, err)
	var c composeFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(false)
	require.NoError(t, dec.Decode(&c))
	return c
}

func TestComposeServices(t *testing.T) {
	c := readCompose(t)
	require.ElementsMatch(t, []string{"mysql", "kafka", "binlog-router"}, keys(c.Services))

	mysql := c.Services["mysql"]
	assert.Equal(t, "mysql:8.4", mysql.Image)
	for _, opt := range []string{"--gtid-mode=ON", "--enforce-gtid-consistency=ON", "--binlog-format=ROW",
		"--binlog-row-image=FULL", "--binlog-row-metadata=FULL", "--server-id=1"} {
		assert.Contains(t, mysql.Command, opt)
	}
	assert.Contains(t, mysql.Volumes, "./mysql-init.sql:/docker-entrypoint-initdb.d/init.sql:ro")
	require.NotNil(t, mysql.Healthcheck)

	kafka := c.Services["kafka"]
	assert.Equal(t, "apache/kafka:3.9.0", kafka.Image)
	for k, v := range map[string]string{
		"KAFKA_PROCESS_ROLES":                            "broker,controller",
		"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
		"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":            "1",
		"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":         "1",
	} {
		assert.Equal(t, v, kafka.Environment[k], k)
	}
	require.NotNil(t, kafka.Healthcheck)

	r := c.Services["binlog-router"]
	require.NotNil(t, r.Build)
	assert.Equal(t, "..", r.Build.Context)
	assert.Equal(t, "docker/Dockerfile", r.Build.Dockerfile)
	_, err := os.Stat(r.Build.Context + "/" + r.Build.Dockerfile)
	assert.NoError(t, err, "the Dockerfile exists relative to the build context")
	assert.Equal(t, "unless-stopped", r.Restart)
	assert.Equal(t, "service_healthy", r.DependsOn["mysql"].Condition)
	assert.Equal(t, "service_healthy", r.DependsOn["kafka"].Condition)
	for _, k := range []string{"MYSQL_ADDR", "MYSQL_USER", "MYSQL_PASSWORD", "KAFKA_BROKERS", "OUTBOX_TABLE", "METRICS_ADDR"} {
		assert.NotEmpty(t, r.Environment["BINLOG_ROUTER_"+k], k)
	}
	assert.Equal(t, "mysql:3306", r.Environment["BINLOG_ROUTER_MYSQL_ADDR"])
	assert.Equal(t, "shop.outbox", r.Environment["BINLOG_ROUTER_OUTBOX_TABLE"])
	// The router reaches Kafka on the listener advertised to containers.
	assert.Contains(t, strings.Split(kafka.Environment["KAFKA_ADVERTISED_LISTENERS"], ","),
		"PLAINTEXT://"+r.Environment["BINLOG_ROUTER_KAFKA_BROKERS"])
	assert.Contains(t, r.Ports, "127.0.0.1:9090:9090")

	// The router's user and password are the ones mysql-init.sql creates.
	users := initUsers(t)
	assert.Equal(t, users[r.Environment["BINLOG_ROUTER_MYSQL_USER"]], r.Environment["BINLOG_ROUTER_MYSQL_PASSWORD"])
}

// initUsers returns the users mysql-init.sql creates, with their passwords.
func initUsers(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("mysql-init.sql")
	require.NoError(t, err)
	users := map[string]string{}
	for _, m := range regexp.MustCompile(`CREATE USER '([^']+)'@'%' IDENTIFIED BY '([^']+)';`).FindAllStringSubmatch(string(data), -1) {
		users[m[1]] = m[2]
	}
	return users
}

// TestInitSQL checks mysql-init.sql without a server: the outbox table is
// the router's MySQL DDL verbatim, and the router's user gets exactly the
// least privileges.
func TestInitSQL(t *testing.T) {
	data, err := os.ReadFile("mysql-init.sql")
	require.NoError(t, err)
	sql := string(data)
	ddl, err := schema.DDL(schema.FlavorMySQL, "outbox", schema.DefaultColumns())
	require.NoError(t, err)
	assert.Contains(t, sql, "USE shop;\n")
	assert.Contains(t, sql, ddl, "the outbox DDL is `binlog-router schema --flavor mysql` verbatim")

	grants := regexp.MustCompile(`(?m)^GRANT (.+) ON (\S+) TO 'binlog_router'@'%';$`).FindAllStringSubmatch(sql, -1)
	var got []string
	for _, g := range grants {
		got = append(got, g[1]+" ON "+g[2])
	}
	assert.ElementsMatch(t, []string{"REPLICATION SLAVE, REPLICATION CLIENT ON *.*", "SELECT ON shop.outbox"}, got)

	users := initUsers(t)
	assert.Contains(t, users, "binlog_router")
	// examples/orders connects as app by default.
	main, err := os.ReadFile("../examples/orders/main.go")
	require.NoError(t, err)
	assert.Contains(t, string(main), `"app:`+users["app"]+`@tcp(127.0.0.1:3306)/shop"`)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

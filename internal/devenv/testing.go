package devenv

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// startTimeout bounds NewMariaDB: a cold datadir install plus startup.
const startTimeout = 90 * time.Second

// NewMariaDB starts a private server for the test and registers Close with
// t.Cleanup. It fails the test, with the server's log tail, if the server
// does not start.
func NewMariaDB(t testing.TB, cfg MariaDBConfig) *MariaDB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	m, err := StartMariaDB(ctx, cfg)
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("devenv: %v", err)
		}
	})
	return m
}

// NewKafka returns StartKafka's cluster (external when KAFKA_BROKERS is
// set) and registers its Close with t.Cleanup.
func NewKafka(t testing.TB, opts ...kfake.Opt) *Kafka {
	t.Helper()
	k, err := StartKafka(opts...)
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	t.Cleanup(k.Close)
	return k
}

// CreateDatabase creates database name on m if it does not exist and
// returns a handle to it (DSN options as in MariaDB.DSN), closed on cleanup.
func CreateDatabase(t testing.TB, m *MariaDB, name string) *sql.DB {
	t.Helper()
	root, err := m.DB("")
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	defer root.Close()
	if _, err := root.Exec("CREATE DATABASE IF NOT EXISTS " + quoteIdent(name)); err != nil {
		t.Fatalf("devenv: creating database %q on %s: %v", name, m.Addr(), err)
	}
	db, err := m.DB(name)
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// quoteIdent quotes a MariaDB identifier with backticks.
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// apacheStartTimeout bounds NewApacheKafka: a first Maven fetch of the jars
// plus formatting and starting the JVMs.
const apacheStartTimeout = 10 * time.Minute

// NewApacheKafka starts a private Apache Kafka cluster for the test and
// registers its Close with t.Cleanup. It fails the test if Java or Maven is
// missing or the cluster does not start.
func NewApacheKafka(t testing.TB, cfg ApacheKafkaConfig) *Kafka {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), apacheStartTimeout)
	defer cancel()
	a, err := StartApacheKafka(ctx, cfg)
	if err != nil {
		t.Fatalf("devenv: %v", err)
	}
	t.Cleanup(a.Close)
	return &Kafka{Brokers: a.Brokers(), Apache: a}
}

// Package devenv starts private MariaDB servers and Kafka brokers for tests,
// the demo and the benchmark, and Kafka Connect workers running Debezium's
// connector (StartConnect) for the side-by-side tests.
//
// # Private servers only
//
// Every MariaDB this package returns is a mariadbd process it started itself,
// with --no-defaults (no my.cnf is read), its own temporary directory (datadir,
// socket, pid file, tmpdir, error log) and its own loopback port. It never
// connects to a server that happened to be running: once a server answers on
// its port, StartMariaDB checks that @@datadir is the datadir it created and
// otherwise treats the port as taken. The server runs as root with
// passwordless TCP access for root@127.0.0.1; never expose it.
//
// Servers are configured for replication tests: log-bin=mysql-bin,
// binlog_format=ROW, binlog_row_image=FULL, binlog_row_metadata=FULL,
// gtid_strict_mode=1, utf8mb4/utf8mb4_unicode_ci, and durability relaxed for
// speed (innodb_flush_log_at_trx_commit=2, sync_binlog=0). These settings
// survive a SIGKILL of mariadbd (committed data is in the OS page cache) but
// not a crash of the machine. MariaDBConfig.ExtraArgs come last and override
// any of them.
//
// # What is cleaned up
//
// Close kills the server and removes its temporary directory; the testing
// helpers (NewMariaDB, NewKafka, CreateDatabase) register their Close with
// t.Cleanup. On Linux every mariadbd is started with Pdeathsig=SIGKILL and
// in its own process group, so it dies with the process that started it even
// when that process is killed and no cleanup runs; its temporary directory is
// then left behind under $TMPDIR (devenv-mariadb-*).
//
// One thing is kept on purpose: a pristine datadir made by mariadb-install-db,
// cached once per mariadbd version (about 65 MB) so that each server starts
// from a copy instead of a fresh install (about 0.1 s instead of 1-2 s). It
// lives in the user cache directory (binlog-router/devenv under
// os.UserCacheDir, or under $TMPDIR when there is none). Delete it at will.
//
// # Kafka Connect and Debezium
//
// StartConnect runs one Kafka Connect worker in distributed mode (its
// offsets, configs and statuses in topics of the given brokers) from
// Kafka Connect's runtime jars, with Debezium's plugin archive unpacked on
// its plugin.path, both fetched once with Maven (DebeziumJars, into the
// user cache directory beside the Kafka jars). The worker listens for REST
// on a free loopback port; its methods create, stop, resume and delete
// connectors and read and alter their offsets. Close kills it and removes
// its directory; like mariadbd it dies with the process that started it.
//
// # Apache Kafka
//
// StartApacheKafka runs one or three KRaft nodes (broker and controller in
// one JVM each) from Apache Kafka's jars, fetched once from Maven Central
// with Maven (ApacheKafkaJars) into the user cache directory. Each node
// has its own data directory and free loopback ports; the cluster is
// formatted at start (transaction.version=2 unless configured otherwise).
// StopNode, StartNode, KillNode, PauseNode and ResumeNode act on one node
// for fault tests; RunTool runs a Kafka command-line tool class. Close
// kills the nodes and removes the directory; like mariadbd they die with
// the process that started them.
//
// # PostgreSQL
//
// StartPostgres runs a private PostgreSQL server (initdb into a temporary
// directory, a free loopback port, trust authentication for the superuser
// postgres; as the operating-system user postgres when the process runs
// as root) from the newest /usr/lib/postgresql/*/bin, for the inbox
// library's PostgreSQL tests; NewPostgres registers its Close with
// t.Cleanup.
//
// # Environment
//
//   - KAFKA_BROKERS: comma separated host:port list. When set, StartKafka and
//     NewKafka start nothing and return these brokers (Kafka.Cluster is nil).
//   - BINLOG_ROUTER_DEVENV_CACHE: directory for the pristine datadir cache,
//     or "off" to run mariadb-install-db for every server.
//   - TMPDIR: where the per-server temporary directories are made. Keep it
//     short: the server's unix socket lives there and socket paths are limited
//     to 107 bytes.
//   - BINLOG_ROUTER_DEBEZIUM_VERSION: the Debezium release StartConnect
//     runs (one of DebeziumReleases; default DefaultDebeziumVersion).
//   - BINLOG_ROUTER_KAFKA_VERSION (KafkaVersionEnv): the Apache Kafka
//     release StartApacheKafka runs (default DefaultKafkaVersion).
//   - BINLOG_ROUTER_KAFKA_JARS (KafkaJarsEnv): a directory of Kafka jars
//     used as is, without Maven.
//   - JAVA_HOME: the JDK that runs Kafka and Kafka Connect (else java on
//     PATH).
//   - POSTGRES_BIN_DIR: where initdb and postgres are (else the newest
//     /usr/lib/postgresql/*/bin).
//   - BINLOG_ROUTER_TEST_BROKER: "apache" makes the Apache Kafka tests of
//     this package run (they start JVMs); the suites in test/ and inbox/
//     read it too.
//   - PATH: searched for mariadbd and mariadb-install-db, then /usr/sbin and
//     /usr/bin.
package devenv

// Package harness starts what the end-to-end suites of package test run
// against, and reads what a consumer sees. It is for those suites only: it
// starts real servers and processes, fails the calling test through its
// testing.TB, and removes what it started when that test ends.
//
// What it starts:
//
//   - Main builds the binlog-router binary once (with -race when the suites
//     run with it) and, when BINLOG_ROUTER_TEST_BROKER=apache, one shared
//     Apache Kafka node for the whole test binary, with a KafkaProxy in
//     front of a second listener; the default (kfake) starts nothing shared.
//   - NewEnv: one test's world, a private MariaDB server, a Kafka (a kfake
//     of the test over TCP, or the shared Apache Kafka), database shop with
//     an outbox table and a topic prefix of its own (env.go). PrivateApache
//     and SharedCluster3 start private and three-node Apache Kafka clusters
//     (broker.go, cluster3.go).
//   - StartRouter, StartCommand, RunCLI: the router binary as a process,
//     its log kept and shown when the test fails (router.go).
//   - NewConsumer and NewCollector: read_committed readers of what the
//     router published (consume.go, faultcheck.go); CheckDelivery and
//     FinishRun compare what a collector read with the rows the outbox
//     table holds: lost, duplicated, disordered (faultcheck.go).
//   - StartLoad: an application committing outbox rows while faults land
//     (load.go); FaultRand and ByMode give the seeded randomness and the
//     short and long (FAULTS=long) variants of the fault suites
//     (faultmode.go).
//   - KafkaProxy, WatchTxns and ApacheKills: a TCP proxy that can drop or
//     hold Kafka requests, chosen by API key and by what they carry (a
//     transactional id), and the watchers that kill the router at a
//     chosen point of its Kafka transaction on kfake and Apache Kafka
//     (kafkaproxy.go, faultwatch.go, txnstate.go). The shared three-node
//     cluster has a proxy in front of each node (Cluster3Proxies).
//   - Checkpoint, binlog and Debezium helpers: the stored checkpoints of a
//     test (checkpoint.go), binlog positions and purges (binlog.go), and a
//     Kafka Connect world with the Debezium connector (debezium.go,
//     debezium_load.go).
//
// Every wait polls with a deadline; nothing here mocks the database or the
// broker.
package harness

// Package test holds the integration and fault tests: each starts a private
// MariaDB server and a Kafka-protocol broker (kfake, or the cluster named
// by KAFKA_BROKERS), runs the real binlog-router binary, and asserts on what
// a separate read_committed consumer reads.
package test

// Command kafkajars fetches the Apache Kafka jars the tests run (Maven
// Central, into the user cache directory) and prints their directory:
// `make kafka-jars`. BINLOG_ROUTER_KAFKA_VERSION picks another 4.x release.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir, err := devenv.KafkaJars(ctx, devenv.KafkaVersion())
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkajars:", err)
		os.Exit(1)
	}
	fmt.Println(dir)
}

// Command debeziumjars fetches the Kafka Connect runtime and the Debezium
// MariaDB connector plugin the tests and the benchmark run (Maven Central,
// into the user cache directory) and prints their directories:
// `make debezium-jars`. BINLOG_ROUTER_DEBEZIUM_VERSION picks another known
// release; -connector mysql fetches the MySQL connector instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

func main() {
	connector := flag.String("connector", "mariadb", "Debezium connector: mariadb or mysql")
	version := flag.String("version", devenv.DebeziumVersion(), "Debezium release")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	jars, err := devenv.DebeziumJars(ctx, *version, *connector)
	if err != nil {
		fmt.Fprintln(os.Stderr, "debeziumjars:", err)
		os.Exit(1)
	}
	fmt.Println(jars.Runtime)
	fmt.Println(jars.Plugins)
}

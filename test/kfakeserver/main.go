// Command kfakeserver runs an in-process franz-go kfake Kafka cluster on
// loopback in its own process, for the benchmark and the fault tests.
//
// When the cluster listens it prints exactly one line to stdout,
//
//	BROKERS=127.0.0.1:PORT[,127.0.0.1:PORT...]
//
// and then serves until SIGTERM or SIGINT. Topics are created on first use
// with -partitions partitions. Records live in memory and die with the
// process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

func main() {
	port := flag.Int("port", 0, "first broker port on 127.0.0.1 (brokers use consecutive ports); 0 picks free ports")
	partitions := flag.Int("partitions", 3, "partitions of automatically created topics")
	brokers := flag.Int("brokers", 1, "number of brokers")
	flag.Parse()
	if err := run(*port, *partitions, *brokers); err != nil {
		fmt.Fprintf(os.Stderr, "kfakeserver: %v\n", err)
		os.Exit(1)
	}
}

func run(port, partitions, brokers int) error {
	switch {
	case brokers < 1:
		return errors.New("-brokers must be at least 1")
	case partitions < 1:
		return errors.New("-partitions must be at least 1")
	case port < 0 || port+brokers-1 > 65535:
		return fmt.Errorf("-port %d with %d brokers is outside 0-65535", port, brokers)
	}
	opts := []kfake.Opt{kfake.NumBrokers(brokers), kfake.DefaultNumPartitions(partitions)}
	if port != 0 {
		ports := make([]int, brokers)
		for i := range ports {
			ports[i] = port + i
		}
		opts = append(opts, kfake.Ports(ports...))
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	k, err := devenv.StartKfake(opts...)
	if err != nil {
		return err
	}
	defer k.Close()
	fmt.Println("BROKERS=" + strings.Join(k.Brokers, ","))
	<-ctx.Done()
	return nil
}

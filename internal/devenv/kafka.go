package devenv

import (
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

// BrokersEnv names the environment variable that points StartKafka at an
// existing Kafka instead of starting one: a comma separated host:port list.
const BrokersEnv = "KAFKA_BROKERS"

// Kafka is a Kafka cluster for tests: an in-process kfake cluster listening
// on loopback TCP, or external brokers named by KAFKA_BROKERS.
type Kafka struct {
	// Brokers are the seed brokers' host:port addresses.
	Brokers []string
	// Cluster is the in-process fake, for its fault injection and control
	// functions; nil when the brokers are external or Apache Kafka.
	Cluster *kfake.Cluster
	// Apache is the private Apache Kafka cluster, for stopping, killing and
	// restarting nodes; nil for kfake and external brokers.
	Apache *ApacheKafka
}

// StartKafka returns the brokers in KAFKA_BROKERS when it is set, starting
// nothing (opts are then ignored). Otherwise it starts an in-process kfake
// cluster as StartKfake does. Tests that need Kafka.Cluster should call
// StartKfake.
func StartKafka(opts ...kfake.Opt) (*Kafka, error) {
	if brokers := splitBrokers(os.Getenv(BrokersEnv)); len(brokers) > 0 {
		return &Kafka{Brokers: brokers}, nil
	}
	return StartKfake(opts...)
}

// StartKfake starts an in-process kfake cluster on 127.0.0.1 with free
// ports, ignoring KAFKA_BROKERS: one broker, topics created automatically
// when a client asks for them, three partitions per new topic. opts come
// last and override those defaults (kfake.NumBrokers, kfake.Ports,
// kfake.DefaultNumPartitions, kfake.SeedTopics, ...). The cluster keeps
// records in memory until Close.
func StartKfake(opts ...kfake.Opt) (*Kafka, error) {
	all := append([]kfake.Opt{
		kfake.NumBrokers(1),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(3),
	}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		return nil, fmt.Errorf("starting kfake cluster: %w", err)
	}
	return &Kafka{Brokers: c.ListenAddrs(), Cluster: c}, nil
}

// External reports whether the brokers are not an in-process kfake: they
// come from KAFKA_BROKERS or are a private Apache Kafka.
func (k *Kafka) External() bool { return k.Cluster == nil }

// Close shuts the in-process cluster or the private Apache Kafka down and
// drops its records; for external brokers it does nothing.
func (k *Kafka) Close() {
	if k.Cluster != nil {
		k.Cluster.Close()
	}
	if k.Apache != nil {
		k.Apache.Close()
	}
}

func splitBrokers(s string) []string {
	var brokers []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	return brokers
}

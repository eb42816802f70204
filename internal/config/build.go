package config

import (
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/relay"
)

// KafkaOpts are the connection options of every Kafka client.
func (c *Config) KafkaOpts() []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(c.KafkaBrokers...), kgo.ClientID("binlog-router")}
}

// ReaderConfig is the binlog source part; call after Validate.
func (c *Config) ReaderConfig(log zerolog.Logger, obs binlog.Observer) binlog.Config {
	return binlog.Config{
		Addr:       c.MySQLAddr,
		User:       c.MySQLUser,
		Password:   c.MySQLPassword,
		ServerID:   uint32(c.ServerID),
		Tables:     c.Tables(),
		Columns:    c.Columns,
		OnUpdate:   binlog.UpdatePolicy(c.OnUpdate),
		Observer:   obs,
		EventCache: c.EventCache,
		Logger:     log,
	}
}

// RelayConfig is the Kafka side; call after Validate.
func (c *Config) RelayConfig(log zerolog.Logger, version string, m relay.Metrics) relay.Config {
	auto := c.AutoCreateTopics
	return relay.Config{
		Name:               c.Name,
		Delivery:           relay.Delivery(c.Delivery),
		CheckpointTopic:    c.CheckpointTopic,
		Start:              c.Start,
		Kafka:              c.KafkaOpts(),
		Route:              c.RouteConfig(),
		CommitRecords:      c.CommitRecords,
		CommitInterval:     c.CommitInterval,
		IdleCheckpoint:     c.IdleCheckpoint,
		TransactionTimeout: c.TransactionTimeout,
		MaxBufferedRecords: c.MaxBufferedRecords,
		MaxBufferedBytes:   c.MaxBufferedBytes,
		MaxMessageBytes:    c.MaxMessageBytes,
		AutoCreateTopics:   &auto,
		ShutdownTimeout:    c.ShutdownTimeout,
		Source:             c.MySQLAddr,
		Version:            version,
		Logger:             log,
		Metrics:            m,
	}
}

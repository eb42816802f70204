package config

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/relay"
)

// KafkaOpts are the options of every Kafka client: the seed brokers
// (--kafka-brokers), client id "binlog-router", the producer's record
// batch compression (--compression), and TLS and SASL. Call after
// Validate or ValidateConnection; if the TLS or SASL settings are
// invalid, every connection fails with that error rather than fall back
// to plain, unauthenticated TCP. Only Validate checks --compression: an
// unknown name here produces uncompressed batches.
func (c *Config) KafkaOpts() []kgo.Opt {
	codec, _ := c.compression() // an invalid name is reported by Validate
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.KafkaBrokers...),
		kgo.ClientID("binlog-router"),
		kgo.ProducerBatchCompression(codec),
	}
	sec := c.resolved()
	if sec.err != nil {
		err := fmt.Errorf("invalid Kafka connection settings: %w", sec.err)
		return append(opts, kgo.Dialer(func(context.Context, string, string) (net.Conn, error) { return nil, err }))
	}
	if sec.kafkaTLS != nil {
		opts = append(opts, kgo.DialTLSConfig(sec.kafkaTLS.Clone()))
	}
	if sec.kafkaSASL != nil {
		opts = append(opts, kgo.SASL(sec.kafkaSASL))
	}
	return opts
}

// mysqlTLS is the TLS setting of ReaderConfig. If it is invalid, every
// handshake fails with that error rather than fall back to plain TCP.
func (c *Config) mysqlTLS() *tls.Config {
	sec := c.resolved()
	if sec.mysqlTLS != nil {
		return sec.mysqlTLS.Clone()
	}
	if mode := normalizeTLSMode(c.MySQLTLSMode); mode == "" || mode == MySQLTLSDisabled {
		return nil
	}
	// Skipping crypto/tls's own verification is safe here: the
	// VerifyConnection that replaces it refuses every server.
	err := fmt.Errorf("invalid MySQL TLS settings: %w", sec.err)
	return &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(tls.ConnectionState) error { return err }}
}

// ReaderConfig is the binlog source part; call after Validate.
func (c *Config) ReaderConfig(log zerolog.Logger, obs binlog.Observer) binlog.Config {
	tlsCfg := c.mysqlTLS()      // first: resolves the password file too if Validate was not called
	zone, _ := c.datetimeZone() // an invalid zone is reported by Validate
	return binlog.Config{
		Addr:         c.MySQLAddr,
		User:         c.MySQLUser,
		Password:     c.MySQLPassword,
		TLS:          tlsCfg,
		ServerID:     uint32(c.ServerID),
		Tables:       c.Tables(),
		Columns:      c.Columns,
		UUIDBinary:   binlog.UUIDBinary(c.UUIDBinaryLayout),
		DatetimeZone: zone,
		OnUpdate:     binlog.UpdatePolicy(c.OnUpdate),
		Observer:     obs,
		EventCache:   c.EventCache,
		Logger:       log,
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
		KafkaTimeout:       c.KafkaTimeout,
		MaxBufferedRecords: c.MaxBufferedRecords,
		MaxBufferedBytes:   c.MaxBufferedBytes,
		MaxMessageBytes:    c.MaxMessageBytes,
		AutoCreateTopics:   &auto,
		ShutdownTimeout:    c.ShutdownTimeout,
		OnInvalid:          relay.InvalidPolicy(c.OnInvalid),
		DeadLetterTopic:    c.DeadLetterTopic,
		HA:                 c.HA,
		HATimeout:          c.HATimeout,
		Source:             c.MySQLAddr,
		Version:            version,
		Logger:             log,
		Metrics:            m,
	}
}

package config

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/relay"
	"github.com/binlog-router/binlog-router/internal/replay"
	"github.com/binlog-router/binlog-router/internal/validate"
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

// readerTLS is the TLS setting of ReaderConfig (MySQLTLS, resolved once).
// If it is invalid, every handshake fails with that error rather than
// fall back to plain TCP.
func (c *Config) readerTLS() *tls.Config {
	sec := c.resolved()
	if sec.mysqlTLSConfig != nil {
		return sec.mysqlTLSConfig.Clone()
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
	tlsCfg := c.readerTLS()     // first: resolves the password file too if Validate was not called
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
		// With contracts the route decodes each payload that has one, which
		// answers --validate-json too: the reader's check would read it twice.
		CheckPayloadJSON: c.ValidateJSON && c.ContractsDir == "",
		Observer:         obs,
		EventCache:       c.EventCache,
		Logger:           log,
	}
}

// RelayConfig is the Kafka side; call after Validate.
func (c *Config) RelayConfig(log zerolog.Logger, version string, m relay.Metrics) relay.Config {
	auto := c.AutoCreateTopics
	return relay.Config{
		Config: pipeline.Config{
			Route:              c.RouteConfig(),
			Cadence:            c.Cadence,
			TransactionTimeout: c.TransactionTimeout,
			KafkaTimeout:       c.KafkaTimeout,
			ProducerLimits:     c.ProducerLimits,
			OnInvalid:          pipeline.InvalidPolicy(c.OnInvalid),
			DeadLetterTopic:    c.DeadLetterTopic,
			Logger:             log,
		},
		Name:              c.Name,
		Delivery:          relay.Delivery(c.Delivery),
		CheckpointTopic:   c.CheckpointTopic,
		Start:             c.Start,
		Kafka:             c.KafkaOpts(),
		KafkaTransactions: c.KafkaTransactions,
		AutoCreateTopics:  &auto,
		ShutdownTimeout:   c.ShutdownTimeout,
		HA:                c.HA,
		HATimeout:         c.HATimeout,
		Source:            c.MySQLAddr,
		Version:           version,
		Metrics:           m,
	}
}

// ReplayConfig is replay's configuration, but for the range's GTID sets
// (From, To), which only the source server can parse: the records are
// built as RouteConfig builds the router's, produced with the router's
// Kafka options and bounds, and a dry run prints them on out. Call after
// Validate, with Replay.TransactionalID set.
func (c *Config) ReplayConfig(log zerolog.Logger, out io.Writer) replay.Config {
	return replay.Config{
		FromTime:           c.Replay.FromTime.Time,
		ToTime:             c.Replay.ToTime.Time,
		Route:              c.RouteConfig(),
		TopicPrefix:        c.Replay.TopicPrefix,
		OnInvalid:          pipeline.InvalidPolicy(c.OnInvalid),
		DeadLetterTopic:    c.DeadLetterTopic,
		DryRun:             c.DryRun,
		Out:                out,
		Kafka:              c.KafkaOpts(),
		TransactionalID:    c.Replay.TransactionalID,
		CommitRecords:      c.CommitRecords,
		TransactionTimeout: c.TransactionTimeout,
		ProducerLimits:     c.ProducerLimits,
		AutoCreateTopics:   c.AutoCreateTopics,
		Logger:             log,
	}
}

// ValidateConfig is what `binlog-router validate` checks: the settings
// run would start with, the relay's defaults applied as the relay applies
// them. Call after Validate.
func (c *Config) ValidateConfig() validate.Config {
	rc := relay.Config{Name: c.Name, CheckpointTopic: c.CheckpointTopic, Start: c.Start,
		Config: pipeline.Config{ProducerLimits: c.ProducerLimits}}.WithDefaults()
	cfg := validate.Config{
		MySQL:           c.ReaderConfig(zerolog.Nop(), nil),
		Kafka:           c.KafkaOpts(),
		Brokers:         c.KafkaBrokers,
		KafkaAuth:       c.CheckKafkaAuth,
		Name:            rc.Name,
		CheckpointTopic: rc.CheckpointTopic,
		Start:           rc.Start,
		ExactlyOnce:     c.Delivery == string(relay.ExactlyOnce),
		MaxMessageBytes: rc.MaxMessageBytes,
		TopicTemplate:   c.TopicTemplate,

		AllowMissingTable: c.AllowMissingTable,
		RequireUUID:       c.RequireUUID,
		ValidateJSON:      c.ValidateJSON,
		Contracts:         c.contracts,
	}
	if c.OnInvalid == string(pipeline.InvalidDeadLetter) {
		cfg.DeadLetterTopic = c.DeadLetterTopic
	}
	return cfg
}

package config

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/recovery"
)

// ValidateRecover is Validate and the bounds of recover's flags.
func (c *Config) ValidateRecover() error {
	errs := []error{c.Validate()}
	for _, b := range c.recoverBounds() {
		if err := b.check(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// recoverBounds is the bounds table of recover's flags (see bound).
func (c *Config) recoverBounds() []bound {
	r := &c.Recover
	return []bound{
		{flag: "since", missing: !r.Since.Given && !r.SinceCheckpoint && r.Where == "",
			msg: "recover needs a window: --since TIME (RFC3339), --since-checkpoint, or --where CONDITION"},
		{flag: "since-checkpoint", missing: r.Since.Given && r.SinceCheckpoint, msg: "--since and --since-checkpoint both set: give one"},
		{flag: "recover-margin", missing: r.Margin < 0, msg: fmt.Sprintf("--recover-margin %s: use 0 or more", r.Margin)},
		{flag: "recover-chunk", value: uint64(max(r.Chunk, 0)), min: 1, max: 100000, why: "rows per query"},
		{flag: "recover-order", value: cmp.Or(r.Order, string(recovery.DefaultOrder)), allowed: []string{string(recovery.OrderAuto), string(recovery.OrderKey), string(recovery.OrderCreatedAt)}},
		{flag: "recover-rate", missing: r.Rate < 0, msg: fmt.Sprintf("--recover-rate %d: use 0 (no cap) to 1000000 rows read per second", r.Rate)},
		{flag: "recover-rate", value: uint64(max(r.Rate, 0)), min: 0, max: 1_000_000, why: "rows read per second, 0 for no cap"},
		{flag: "max-known-ids", value: uint64(max(r.MaxKnownIDs, 0)), min: 1, max: 1 << 31, why: "published ids held in memory"},
	}
}

// RecoverConfig is one recovery of the rows created at or after since
// (zero: no time bound), publishing with transactionalID. zone is the
// time zone of a DATETIME creation time when --datetime-zone is not set
// (the server's). Call after ValidateRecover.
func (c *Config) RecoverConfig(log zerolog.Logger, since time.Time, zone *time.Location, transactionalID string) recovery.Config {
	if z, _ := c.datetimeZone(); z != nil { // an invalid zone is reported by Validate
		zone = z
	}
	limits := c.ProducerLimits.OrDefaults()
	timeout := c.TransactionTimeout
	if timeout <= 0 {
		timeout = pipeline.DefaultTransactionTimeout
	}
	return recovery.Config{
		Tables:          c.Tables(),
		Columns:         c.Columns,
		Zone:            zone,
		UUIDBinary:      binlog.UUIDBinary(c.UUIDBinaryLayout),
		Since:           since,
		Where:           c.Recover.Where,
		Margin:          c.Recover.Margin,
		Chunk:           c.Recover.Chunk,
		Order:           recovery.Order(c.Recover.Order),
		CommitRecords:   c.CommitRecords,
		MaxKnownIDs:     c.Recover.MaxKnownIDs,
		Rate:            c.Recover.Rate,
		Route:           c.RouteConfig(),
		OnInvalid:       pipeline.InvalidPolicy(c.OnInvalid),
		DeadLetterTopic: c.DeadLetterTopic,
		Producer: kafka.Config{
			Kafka:              c.KafkaOpts(),
			TransactionTimeout: timeout,
			MaxBufferedRecords: limits.MaxBufferedRecords,
			MaxBufferedBytes:   limits.MaxBufferedBytes,
			MaxMessageBytes:    limits.MaxMessageBytes,
			AutoCreateTopics:   c.AutoCreateTopics,
			Logger:             log,
		},
		TransactionalID: transactionalID,
		DryRun:          c.DryRun,
		Logger:          log,
	}
}

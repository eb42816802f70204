package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/checkpoint"
	"github.com/binlog-router/binlog-router/internal/contract"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/relay"
	"github.com/binlog-router/binlog-router/internal/route"
	"github.com/binlog-router/binlog-router/internal/schema"
)

// Validate resolves the preset, secret files and TLS/SASL settings (see
// ValidateConnection) and checks every flag against the bounds table,
// returning all problems at once, in the table's order.
func (c *Config) Validate() error {
	connErr := c.ValidateConnection()
	preset, presetErr := schema.PresetByName(c.Preset)
	c.Columns = mergeColumns(preset.Columns, c.Columns)
	if c.TopicTemplate == "" {
		c.TopicTemplate = preset.TopicTemplate
	}
	var errs []error
	for _, b := range c.bounds(connErr, presetErr) {
		if err := b.check(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// bounds is the table Validate checks: one row per rule, each naming its
// flag, the value given and what is allowed, in the order the errors are
// reported. connErr and presetErr are the verdicts of ValidateConnection
// and schema.PresetByName, which Validate needs before the table.
//
// The pipeline's counts, sizes and durations have no row: zero or less
// takes the default (the components' setDefaults,
// pipeline.ProducerLimits.OrDefaults).
func (c *Config) bounds(connErr, presetErr error) []bound {
	if presetErr != nil {
		presetErr = fmt.Errorf("--preset: %w", presetErr)
	}
	_, routeErr := route.New(route.Config{TopicTemplate: c.TopicTemplate})
	if routeErr != nil {
		routeErr = fmt.Errorf("--topic-template: %w", routeErr)
	}
	envelopeErr := route.Config{Envelope: route.Envelope(c.Envelope), CloudEventsSource: c.CloudEventsSource}.Validate()
	_, zoneErr := c.datetimeZone()
	contractsErr := c.loadContracts()
	_, compressionErr := c.compression()
	rows := []bound{
		{flag: "mysql-tls, kafka-tls, kafka-sasl-*, *-password-file", err: connErr},
		{flag: "preset", err: presetErr},
		{flag: "column-*", err: c.Columns.Validate()},
		{flag: "outbox-table", missing: len(c.OutboxTables) == 0, msg: "no outbox table: set --outbox-table db.table"},
	}
	for _, t := range c.OutboxTables {
		if _, err := schema.ParseTableName(t); err != nil {
			rows = append(rows, bound{flag: "outbox-table", err: fmt.Errorf("--outbox-table: %w", err)})
		}
	}
	return append(rows, []bound{
		{flag: "kafka-brokers", missing: len(c.KafkaBrokers) == 0, msg: "no Kafka brokers: set --kafka-brokers host:port"},
		{flag: "topic-template", err: routeErr},
		{flag: "envelope, cloudevents-source", err: envelopeErr},
		{flag: "contracts-missing", value: c.ContractsMissing, allowed: []string{string(contract.MissingAllow), string(contract.MissingFail)}},
		{flag: "contracts-dir", err: contractsErr},
		{flag: "on-update", value: c.OnUpdate, allowed: []string{string(binlog.UpdateWarn), string(binlog.UpdateFail)}},
		{flag: "uuid-binary-layout", value: c.UUIDBinaryLayout, allowed: []string{string(binlog.UUIDStandard), string(binlog.UUIDSwapped)}},
		{flag: "datetime-zone", err: zoneErr},
		{flag: "on-invalid", value: c.OnInvalid, allowed: []string{string(pipeline.InvalidFail), string(pipeline.InvalidDeadLetter)}},
		{flag: "on-partition-change", value: c.OnPartitionChange, allowed: []string{string(kafka.PartitionWarn), string(kafka.PartitionFail)}},
		{flag: "delivery", value: c.Delivery, allowed: []string{string(relay.ExactlyOnce), string(relay.AtLeastOnce)}},
		{flag: "compression", err: compressionErr},
		{flag: "max-message-bytes, max-buffered-bytes", err: c.bufferFitsRecord()},
		{flag: "start", err: checkpoint.CheckStart(c.Start)},
		{flag: "server-id", value: uint64(c.ServerID), min: 1, max: 1<<32 - 1, why: "unique among the server's replicas"},
		{flag: "kafka-transactions", value: uint64(c.KafkaTransactions), min: 1, max: 4, why: "1 waits for each transaction's markers before the next one produces"},
		{flag: "name", missing: c.Name == "", msg: "--name is empty"},
	}...)
}

// bufferFitsRecord refuses a producer buffer smaller than the largest
// record: franz-go fails a record larger than --max-buffered-bytes.
func (c *Config) bufferFitsRecord() error {
	l := pipeline.ProducerLimits{MaxBufferedBytes: c.MaxBufferedBytes, MaxMessageBytes: c.MaxMessageBytes}.OrDefaults()
	if l.MaxMessageBytes <= l.MaxBufferedBytes {
		return nil
	}
	return fmt.Errorf("--max-message-bytes %d is larger than --max-buffered-bytes %d: the producer could never buffer a record that large; set --max-buffered-bytes to at least %d",
		l.MaxMessageBytes, l.MaxBufferedBytes, l.MaxMessageBytes)
}

// bound is one row of the bounds table, in the manner of franz-go's
// cfg.validate(): the flag, its value and what is allowed. A row is one
// of:
//   - a choice: value (a string) must be one of allowed; the error is
//     `--flag "value": use a, b or c`;
//   - a range: value (a uint64) must be within min..max; the error is
//     `--flag value: use min to max, why`;
//   - a value that must be given: missing says it was not, msg is the
//     error;
//   - a value only its parser can judge: err is the parser's verdict,
//     worded to name the flag and the fix.
type bound struct {
	flag    string   // the flag, without the dashes
	value   any      // the value given, for a choice or a range
	allowed []string // a choice: the values allowed
	min     uint64   // a range: the least value allowed
	max     uint64   // a range: the greatest value allowed (0: not a range)
	why     string   // a range: what the error says after the range
	missing bool     // a value that must be given is not
	msg     string   // the error of a missing value
	err     error    // a parser's verdict
}

// check returns the row's error, nil if the value is allowed.
func (b bound) check() error {
	switch {
	case b.err != nil:
		return b.err
	case b.missing:
		return errors.New(b.msg)
	case b.allowed != nil:
		v, _ := b.value.(string)
		for _, a := range b.allowed {
			if v == a {
				return nil
			}
		}
		return fmt.Errorf("--%s %q: use %s", b.flag, v, orList(b.allowed))
	case b.max != 0:
		v, _ := b.value.(uint64)
		if v >= b.min && v <= b.max {
			return nil
		}
		msg := fmt.Sprintf("--%s %d: use %d to %d", b.flag, v, b.min, b.max)
		if b.why != "" {
			msg += ", " + b.why
		}
		return errors.New(msg)
	}
	return nil
}

// orList writes "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

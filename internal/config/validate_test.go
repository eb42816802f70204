package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateBounds: each value outside its flag's bounds is refused
// with the error naming the flag and the fix, and the defaults pass.
func TestValidateBounds(t *testing.T) {
	c := validRun()
	require.NoError(t, c.Validate(), "the defaults with an outbox table")

	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"no outbox table", func(c *Config) { c.OutboxTables = nil }, "no outbox table: set --outbox-table db.table"},
		{"no brokers", func(c *Config) { c.KafkaBrokers = nil }, "no Kafka brokers: set --kafka-brokers host:port"},
		{"on-update", func(c *Config) { c.OnUpdate = "ignore" }, `--on-update "ignore": use warn or fail`},
		{"uuid-binary-layout", func(c *Config) { c.UUIDBinaryLayout = "mixed" }, `--uuid-binary-layout "mixed": use standard or swapped`},
		{"on-invalid", func(c *Config) { c.OnInvalid = "skip" }, `--on-invalid "skip": use fail or dead-letter`},
		{"delivery", func(c *Config) { c.Delivery = "at-most-once" }, `--delivery "at-most-once": use exactly-once or at-least-once`},
		{"compression", func(c *Config) { c.Compression = "brotli" }, `--compression "brotli": use none, snappy, lz4, zstd or gzip`},
		{"server-id zero", func(c *Config) { c.ServerID = 0 }, "--server-id 0: use 1 to 4294967295, unique among the server's replicas"},
		{"server-id too large", func(c *Config) { c.ServerID = 1 << 32 }, "--server-id 4294967296: use 1 to 4294967295, unique among the server's replicas"},
		{"name", func(c *Config) { c.Name = "" }, "--name is empty"},
		{"preset", func(c *Config) { c.Preset = "kafka-connect" }, "--preset: unknown outbox preset \"kafka-connect\"; use one of: default, debezium\n" +
			"outbox columns: no column name for the event id; set --column-event-id"},
		{"outbox-table", func(c *Config) { c.OutboxTables = []string{"outbox"} }, "--outbox-table: "},
		{"topic-template", func(c *Config) { c.TopicTemplate = "outbox.{nope}" }, "--topic-template: "},
		{"datetime-zone", func(c *Config) { c.DatetimeZone = "Mars/Olympus" }, "--datetime-zone: "},
		{"start", func(c *Config) { c.Start = "yesterday" }, "--start"},
		{"max-message-bytes over the buffer", func(c *Config) { c.MaxMessageBytes = 16 << 20 },
			"--max-message-bytes 16777216 is larger than --max-buffered-bytes 8388608: the producer could never buffer a record that large; set --max-buffered-bytes to at least 16777216"},
		{"buffer under max-message-bytes", func(c *Config) { c.MaxMessageBytes, c.MaxBufferedBytes = 4<<20, 2<<20 },
			"--max-message-bytes 4194304 is larger than --max-buffered-bytes 2097152: the producer could never buffer a record that large; set --max-buffered-bytes to at least 4194304"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validRun()
			tc.set(&c)
			err := c.Validate()
			require.Error(t, err)
			if strings.HasSuffix(tc.want, ": ") || !strings.Contains(tc.want, " ") {
				assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%q does not start with %q", err, tc.want)
				return
			}
			assert.EqualError(t, err, tc.want)
		})
	}
}

// TestValidateAllAtOnce: Validate reports every problem, in the order of
// the bounds table.
func TestValidateAllAtOnce(t *testing.T) {
	c := validRun()
	c.OutboxTables, c.OnUpdate, c.ServerID, c.Name = nil, "x", 0, ""
	assert.EqualError(t, c.Validate(), strings.Join([]string{
		"no outbox table: set --outbox-table db.table",
		`--on-update "x": use warn or fail`,
		"--server-id 0: use 1 to 4294967295, unique among the server's replicas",
		"--name is empty",
	}, "\n"))
}

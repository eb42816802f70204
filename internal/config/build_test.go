package config

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/pipeline"
	"github.com/binlog-router/binlog-router/internal/relay"
)

// TestDefaultsAreTheComponents: the flags' defaults are the components'
// own, so that a relay, reader or replay built without the command line
// runs as the router does by default.
func TestDefaultsAreTheComponents(t *testing.T) {
	c := validRun()
	require.NoError(t, c.Validate())
	got := c.RelayConfig(zerolog.Nop(), "test", nil).WithDefaults()
	want := relay.Config{}.WithDefaults()
	assert.Equal(t, want.Name, got.Name)
	assert.Equal(t, want.Delivery, got.Delivery)
	assert.Equal(t, want.CheckpointTopic, got.CheckpointTopic)
	assert.Equal(t, want.Start, got.Start)
	assert.Equal(t, want.CommitRecords, got.CommitRecords)
	assert.Equal(t, want.CommitInterval, got.CommitInterval)
	assert.Equal(t, want.IdleCheckpoint, got.IdleCheckpoint)
	assert.Equal(t, want.KafkaTimeout, got.KafkaTimeout)
	assert.Equal(t, want.TransactionTimeout, got.TransactionTimeout)
	assert.Equal(t, want.ProducerLimits, got.ProducerLimits)
	assert.Equal(t, *want.AutoCreateTopics, *got.AutoCreateTopics)
	assert.Equal(t, want.ShutdownTimeout, got.ShutdownTimeout)
	assert.Equal(t, want.OnInvalid, got.OnInvalid)
	assert.Equal(t, want.DeadLetterTopic, got.DeadLetterTopic)
	assert.Equal(t, want.HATimeout, got.HATimeout)
	// The flags' own defaults, not only what the relay makes of zero.
	assert.Equal(t, pipeline.ProducerLimits{}.OrDefaults(), c.ProducerLimits)
	assert.Equal(t, pipeline.DefaultCommitInterval, c.CommitInterval)

	r := c.ReaderConfig(zerolog.Nop(), nil)
	assert.Equal(t, uint32(binlog.DefaultServerID), r.ServerID)
	assert.Equal(t, binlog.DefaultOnUpdate, r.OnUpdate)
	assert.Equal(t, binlog.DefaultUUIDBinary, r.UUIDBinary)
	assert.Equal(t, binlog.DefaultEventCache, r.EventCache)
	assert.True(t, r.CheckPayloadJSON, "--validate-json: the reader checks payloads")

	c.ValidateJSON = false
	assert.False(t, c.ReaderConfig(zerolog.Nop(), nil).CheckPayloadJSON)
	c.ValidateJSON, c.ContractsDir = true, "contracts"
	assert.False(t, c.ReaderConfig(zerolog.Nop(), nil).CheckPayloadJSON, "the route's contract decoding checks JSON")
}

// TestReplayConfig: replay gets the router's records, Kafka options and
// bounds, and the range flags.
func TestReplayConfig(t *testing.T) {
	c := Default()
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	c.Register(fs, CmdReplay)
	require.NoError(t, Load(fs, []string{"--outbox-table=shop.outbox", "--from-time=2024-05-01T12:00:00Z",
		"--topic-prefix=re.", "--dry-run", "--commit-records=7", "--max-buffered-records=9", "--transaction-timeout=3s", "--auto-create-topics=false"}))
	require.NoError(t, c.Validate())
	c.Replay.TransactionalID = "replay-1"
	r := c.ReplayConfig(zerolog.Nop(), io.Discard)
	assert.Equal(t, time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), r.FromTime)
	assert.True(t, r.ToTime.IsZero())
	assert.Equal(t, "re.", r.TopicPrefix)
	assert.True(t, r.DryRun)
	assert.Equal(t, io.Discard, r.Out)
	assert.Equal(t, "replay-1", r.TransactionalID)
	assert.Equal(t, 7, r.CommitRecords)
	assert.Equal(t, 3*time.Second, r.TransactionTimeout)
	assert.Equal(t, pipeline.ProducerLimits{MaxBufferedRecords: 9, MaxBufferedBytes: pipeline.DefaultMaxBufferedBytes, MaxMessageBytes: pipeline.DefaultMaxMessageBytes}, r.ProducerLimits)
	assert.False(t, r.AutoCreateTopics)
	assert.Equal(t, c.RouteConfig(), r.Route)
	assert.NotEmpty(t, r.Kafka)
}

// TestValidateConfig: validate checks what the relay would run with: its
// defaults for values it takes as unset, the dead-letter topic only when
// rows go there.
func TestValidateConfig(t *testing.T) {
	c := validRun()
	c.CheckpointTopic, c.MaxMessageBytes = "", 0
	require.NoError(t, c.Validate())
	v := c.ValidateConfig()
	assert.Equal(t, relay.DefaultName, v.Name)
	assert.Equal(t, "_binlog_router_checkpoints", v.CheckpointTopic)
	assert.Equal(t, relay.DefaultStart, v.Start)
	assert.Equal(t, pipeline.DefaultMaxMessageBytes, v.MaxMessageBytes)
	assert.True(t, v.ExactlyOnce)
	assert.Empty(t, v.DeadLetterTopic, "rows that cannot be routed stop the router")
	assert.Empty(t, v.TopicTemplate, "the default preset's: route's default")
	assert.Equal(t, []string{"127.0.0.1:9092"}, v.Brokers)

	c.OnInvalid, c.Delivery = string(pipeline.InvalidDeadLetter), string(relay.AtLeastOnce)
	v = c.ValidateConfig()
	assert.Equal(t, pipeline.DefaultDeadLetterTopic, v.DeadLetterTopic)
	assert.False(t, v.ExactlyOnce)
}

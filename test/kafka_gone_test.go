package test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
	"github.com/binlog-router/binlog-router/test/harness"
)

// TestFaultKafkaGoneTooLong: a broker that stays away longer than
// --kafka-timeout is a clear fatal error, not silent waiting or dropping.
func TestFaultKafkaGoneTooLong(t *testing.T) {
	e := harness.NewEnv(t, harness.EnvOpts{})
	if harness.OnApache() {
		e.Kafka = harness.PrivateApache(t, devenv.ApacheKafkaConfig{}) // a node of its own to stop
	} else if e.Kafka.External() {
		t.Skip("KAFKA_BROKERS is set: this test stops the in-process kfake broker")
	}
	r := harness.StartRouter(t, e.Args("gone", "--kafka-timeout", "4s")...)
	e.InsertTx(harness.NewEvent("a", "Gone", `{}`))
	harness.NewConsumer(t, e.Kafka.Brokers, e.TopicRegex()).Read(1, 60*time.Second)
	e.Kafka.Close()
	start := time.Now()
	e.InsertTx(harness.NewEvent("a", "Gone", `{}`))
	code := r.Wait(90 * time.Second)
	require.Equal(t, 1, code)
	t.Logf("exited %s after the broker went away", time.Since(start).Round(time.Millisecond))
	assert.Contains(t, r.Out.String(), "--kafka-timeout")
}

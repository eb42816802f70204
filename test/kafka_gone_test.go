package test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/binlog-router/binlog-router/internal/devenv"
)

// TestFaultKafkaGoneTooLong: a broker that stays away longer than
// --kafka-timeout is a clear fatal error, not silent waiting or dropping.
func TestFaultKafkaGoneTooLong(t *testing.T) {
	e := newEnv(t, envOpts{})
	if onApache() {
		e.kafka = privateApache(t, devenv.ApacheKafkaConfig{}) // a node of its own to stop
	} else if e.kafka.External() {
		t.Skip("KAFKA_BROKERS is set: this test stops the in-process kfake broker")
	}
	r := startRouter(t, e.args("gone", "--kafka-timeout", "4s")...)
	e.insertTx(newEvent("a", "Gone", `{}`))
	newConsumer(t, e.kafka.Brokers, e.topicRegex()).read(1, 60*time.Second)
	e.kafka.Close()
	start := time.Now()
	e.insertTx(newEvent("a", "Gone", `{}`))
	code := r.wait(90 * time.Second)
	require.Equal(t, 1, code)
	t.Logf("exited %s after the broker went away", time.Since(start).Round(time.Millisecond))
	assert.Contains(t, r.out.String(), "--kafka-timeout")
}

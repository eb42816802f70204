package relay

import (
	"time"

	"github.com/binlog-router/binlog-router/internal/pipeline"
)

// Metrics receives the relay's measurements: the loop's
// (pipeline.Metrics) and those of what only the live router does. Calls
// come from the relay goroutine and must not block.
type Metrics interface {
	pipeline.Metrics
	// KafkaTransaction reports when the open Kafka transaction was begun
	// (exactly-once), by the local clock, or the zero time once none is
	// open. It is called when that changes, not per record.
	KafkaTransaction(began time.Time)
	// KafkaOutage reports an outage that ended: from the first failure to
	// reach Kafka to the first commit Kafka accepted after it.
	KafkaOutage(d time.Duration)
	// TransactionRepaired counts a hanging transaction of the router's
	// own whose decided markers a session wrote (kafka.SessionConfig
	// OnRepaired); it is called from Open, on the relay goroutine.
	TransactionRepaired(committed bool)
	// BufferedFrom gives the active session's count of records produced
	// and not yet acknowledged (kafka.Session.Buffered), which is safe to
	// call from any goroutine; it is called when a session is created.
	BufferedFrom(f func() int64)
}

type nopMetrics struct{ pipeline.NopMetrics }

func (nopMetrics) KafkaTransaction(time.Time) {}
func (nopMetrics) KafkaOutage(time.Duration)  {}
func (nopMetrics) TransactionRepaired(bool)   {}
func (nopMetrics) BufferedFrom(func() int64)  {}

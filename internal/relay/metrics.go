package relay

import "time"

// Metrics receives the relay's measurements. Calls come from the relay
// goroutine and must not block.
type Metrics interface {
	// Routed counts one record produced to topic with the given value size.
	Routed(topic string, valueBytes int)
	// Committed reports a commit point: the checkpoint now covers the
	// transaction committed on the source at sourceTime, and records more
	// records, the first of which was produced at began (the Kafka
	// transaction's begin, exactly-once).
	Committed(gtidSet string, sourceTime time.Time, records int, began time.Time)
	// Transactions counts binlog transactions seen.
	Transactions(n int)
	// CaughtUp reports that the source has nothing newer (a heartbeat).
	CaughtUp()
	// RowError counts a row that could not be routed, by kind.
	RowError(kind string)
	// DeadLetter counts a row diverted to the dead-letter topic, by kind.
	DeadLetter(kind string)
	// Failed counts an error by kind; the relay reports "commit" when a
	// commit point fails.
	Failed(kind string)
	// Buffered reports franz-go's buffered record count.
	Buffered(records int64)
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
}

type nopMetrics struct{}

func (nopMetrics) Routed(string, int)                          {}
func (nopMetrics) Committed(string, time.Time, int, time.Time) {}
func (nopMetrics) Transactions(int)                            {}
func (nopMetrics) CaughtUp()                                   {}
func (nopMetrics) RowError(string)                             {}
func (nopMetrics) DeadLetter(string)                           {}
func (nopMetrics) Failed(string)                               {}
func (nopMetrics) Buffered(int64)                              {}
func (nopMetrics) KafkaTransaction(time.Time)                  {}
func (nopMetrics) KafkaOutage(time.Duration)                   {}
func (nopMetrics) TransactionRepaired(bool)                    {}

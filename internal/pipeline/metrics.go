package pipeline

import "time"

// Metrics receives the loop's measurements. Calls come from the loop's
// goroutine and must not block.
type Metrics interface {
	// RoutedRecords counts records produced to topic whose values
	// together have valueBytes bytes. The loop adds up the records of a
	// batch by topic and reports them once the batch is handled (or has
	// failed), not record by record.
	RoutedRecords(topic string, records, valueBytes int)
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
	// Failed counts an error by kind; the loop reports "commit" when a
	// commit point fails.
	Failed(kind string)
}

// NopMetrics measures nothing: the default.
type NopMetrics struct{}

func (NopMetrics) RoutedRecords(string, int, int)              {}
func (NopMetrics) Committed(string, time.Time, int, time.Time) {}
func (NopMetrics) Transactions(int)                            {}
func (NopMetrics) CaughtUp()                                   {}
func (NopMetrics) RowError(string)                             {}
func (NopMetrics) DeadLetter(string)                           {}
func (NopMetrics) Failed(string)                               {}

package metrics

import "time"

// The methods of relay.Metrics. They are called from the relay goroutine.

// Routed counts one record produced to topic with the given value size.
func (m *Metrics) Routed(topic string, valueBytes int) { m.RoutedRecords(topic, 1, valueBytes) }

// RoutedRecords counts records produced to topic whose values together
// have valueBytes bytes.
func (m *Metrics) RoutedRecords(topic string, records, valueBytes int) {
	if records <= 0 {
		return
	}
	m.events.Add(uint64(records))
	m.routedMu.Lock()
	c, ok := m.routedCache[topic]
	if !ok {
		label := m.topics.value(topic)
		c = routedCounters{
			events: m.eventsRouted.WithLabelValues(label),
			bytes:  m.bytesRouted.WithLabelValues(label),
		}
		if label != Other {
			// Topics counted as "other" are not cached, so that the cache
			// stays as bounded as the label.
			m.routedCache[topic] = c
		}
	}
	m.routedMu.Unlock()
	c.events.Add(float64(records))
	c.bytes.Add(float64(valueBytes))
}

// Committed records a commit point: the checkpoint now covers gtidSet, whose
// last transaction was committed on the source at sourceTime, and records
// more records, the first of which was produced at began.
func (m *Metrics) Committed(gtidSet string, sourceTime time.Time, records int, began time.Time) {
	now := m.cfg.now()
	m.latency.observe(now, began, sourceTime, records)
	m.commits.Inc()
	m.commitRecords.Add(float64(max(records, 0)))

	m.st.mu.Lock()
	s := &m.st
	s.gtidSet = gtidSet
	s.committedAt = now
	if sourceTime.After(s.sourceTime) {
		s.sourceTime = sourceTime
	}
	s.commits++
	s.pending = 0
	if s.flavor == "" {
		m.setFlavorLocked(flavorOf(gtidSet))
	}
	m.st.mu.Unlock()
}

// Transactions counts n binlog transactions read.
func (m *Metrics) Transactions(n int) {
	if n <= 0 {
		return
	}
	m.txns.Add(uint64(n))
	m.transactions.Add(float64(n))
	m.st.mu.Lock()
	m.st.pending += n
	m.st.caughtUp = false
	m.st.mu.Unlock()
}

// CaughtUp records a heartbeat: the source has nothing newer. With nothing
// pending the checkpoint is current, so lag is 0 until the next
// transaction.
func (m *Metrics) CaughtUp() {
	now := m.cfg.now()
	m.st.mu.Lock()
	if m.st.pending == 0 {
		m.st.caughtUp = true
		m.st.heartbeatAt = now
	}
	m.st.mu.Unlock()
}

// RowError counts a row that could not be routed, by kind.
func (m *Metrics) RowError(kind string) { m.Failed(kind) }

// BufferedFrom makes f the source of binlog_router_kafka_buffered_records,
// read at each scrape: the active session's count of records produced and
// not yet acknowledged. f must be safe to call from any goroutine.
func (m *Metrics) BufferedFrom(f func() int64) { m.buffered.Store(&f) }

// Methods beyond relay.Metrics and binlog.Observer, for the reporters that
// count those.

// Reconnect counts a lost binlog connection that is being retried.
func (m *Metrics) Reconnect() { m.reconnects.Inc() }

// DeadLetter counts a row written to the dead-letter topic, by row error
// kind.
func (m *Metrics) DeadLetter(kind string) {
	m.deadLetters.WithLabelValues(m.kinds.value(kind)).Inc()
}

// Failed counts an error by kind: a row error kind, "commit" (a commit point
// that failed), "kafka" (a session ended by a Kafka error, resumed from the
// checkpoint), "checkpoint_behind", "produce" (KafkaHooks count these),
// "outbox_update", "kafka_group".
func (m *Metrics) Failed(kind string) {
	m.errors.WithLabelValues(m.kinds.value(kind)).Inc()
}

// SetFlavor sets the checkpoint's GTID flavor ("mysql" or "mariadb") before
// the first commit point; otherwise it is inferred from the GTID set.
func (m *Metrics) SetFlavor(flavor string) {
	m.st.mu.Lock()
	m.setFlavorLocked(flavor)
	m.st.mu.Unlock()
}

func (m *Metrics) setFlavorLocked(flavor string) {
	if flavor == "" || flavor == m.st.flavor {
		return
	}
	m.st.flavor = flavor
	m.checkpoint.Reset()
	m.checkpoint.WithLabelValues(flavor).Set(1)
}

// The methods of binlog.Observer. They are called from the reading
// goroutine.

// OutboxUpdate counts UPDATEd outbox rows (ignored under the warn policy)
// as errors of kind "outbox_update".
func (m *Metrics) OutboxUpdate(_, _ string, rows int) {
	m.errors.WithLabelValues("outbox_update").Add(float64(max(rows, 1)))
}

// DDL counts a DDL statement that may touch an outbox table.
func (m *Metrics) DDL(_, _ string) { m.ddl.Inc() }

// Replayed counts a transaction the server sent although the reader
// already had it, and skipped.
func (m *Metrics) Replayed(string) { m.replayed.Inc() }

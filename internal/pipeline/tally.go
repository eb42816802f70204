package pipeline

// maxTallied is how many topics a tally adds up at once; the records of
// any further topic of the batch are reported one by one.
const maxTallied = 16

// routedTally adds up the records a batch produced, by topic, so that the
// metrics are told once per topic and batch rather than once per record
// (a lock, a map lookup and two atomic additions each). The topics the
// router returns are its cached strings, so comparing them is mostly a
// comparison of pointers.
type routedTally struct {
	topics []routedCount
}

type routedCount struct {
	topic           string
	records, vbytes int
}

// add counts one record of topic with a value of vbytes bytes.
func (t *routedTally) add(m Metrics, topic string, vbytes int) {
	for i := range t.topics {
		if c := &t.topics[i]; c.topic == topic {
			c.records++
			c.vbytes += vbytes
			return
		}
	}
	if len(t.topics) >= maxTallied {
		m.RoutedRecords(topic, 1, vbytes)
		return
	}
	t.topics = append(t.topics, routedCount{topic: topic, records: 1, vbytes: vbytes})
}

// flush reports what was added up and starts again.
func (t *routedTally) flush(m Metrics) {
	for _, c := range t.topics {
		m.RoutedRecords(c.topic, c.records, c.vbytes)
	}
	clear(t.topics)
	t.topics = t.topics[:0]
}

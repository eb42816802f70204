package metrics

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// PartitionNoteFor is how long /readyz shows a partition count change.
const PartitionNoteFor = 15 * time.Minute

// partitionNotes are the recent partition count changes /readyz shows.
type partitionNotes struct {
	mu    sync.Mutex
	notes []partitionNote
}

type partitionNote struct {
	topic    string
	old, new int
	at       time.Time
}

// PartitionChanged counts a change of topic's partition count from old
// to new in binlog_router_kafka_partition_changes_total{topic} and shows
// it in /readyz for PartitionNoteFor. It does not change readiness: with
// --on-partition-change=warn the router routes on under the new count,
// with fail it stops.
func (m *Metrics) PartitionChanged(topic string, old, new int) {
	m.partChanges.WithLabelValues(topic).Inc()
	m.partNotes.mu.Lock()
	defer m.partNotes.mu.Unlock()
	m.partNotes.notes = append(m.partNotes.notes, partitionNote{topic: topic, old: old, new: new, at: m.cfg.now()})
}

// partitionLines are the /readyz lines of the changes of the last
// PartitionNoteFor, oldest first.
func (m *Metrics) partitionLines() []string {
	now := m.cfg.now()
	m.partNotes.mu.Lock()
	defer m.partNotes.mu.Unlock()
	m.partNotes.notes = slices.DeleteFunc(m.partNotes.notes, func(n partitionNote) bool { return now.Sub(n.at) > PartitionNoteFor })
	var out []string
	for _, n := range m.partNotes.notes {
		out = append(out, fmt.Sprintf("partitions: topic %s went from %d to %d partitions at %s: a key's later records may be on another partition than its earlier ones",
			n.topic, n.old, n.new, n.at.UTC().Format(time.RFC3339)))
	}
	return out
}

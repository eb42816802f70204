package pipeline

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/kafka"
	"github.com/binlog-router/binlog-router/internal/route"
)

// KindInvalidTimestamp is the row-error kind of a row whose record
// timestamp (created_at, or the commit time) the brokers refuse: more than
// the topic's message.timestamp.after.max.ms ahead of their clock, or more
// than its message.timestamp.before.max.ms behind.
const KindInvalidTimestamp route.Kind = "invalid_timestamp"

// timestampGuard turns INVALID_TIMESTAMP into row errors. The brokers
// refuse a whole record batch when one record's timestamp is outside their
// window, and franz-go fails every record of it with the same error, so
// the answer does not say which row it was. The guard notes the refused
// records (note, from franz-go's goroutines); when the session has failed
// with INVALID_TIMESTAMP, it reads the window of their topics and marks
// the records outside it (judge). The next session, which starts from the
// committed checkpoint like after any Kafka error, meets those rows again,
// and the loop handles each as a row error (rowError): a stop naming the
// row and the setting, or a dead letter. The brokers stay the judge: the
// guard never refuses a row they have not refused.
type timestampGuard struct {
	mu      sync.Mutex
	refused []refusedRecord // records failed with INVALID_TIMESTAMP this session
	limit   int             // at most this many are kept (MaxBufferedRecords: no more can fail at once)

	marked map[rowKey]*route.RowError // rows to handle as row errors; across sessions
}

type refusedRecord struct {
	key   rowKey
	topic string
	ts    time.Time
}

// rowKey names a row across sessions: its transaction and event id.
type rowKey struct{ gtid, eventID string }

// note keeps a record franz-go failed with INVALID_TIMESTAMP.
func (g *timestampGuard) note(rec *kgo.Record, err error) {
	if !errors.Is(err, kerr.InvalidTimestamp) {
		return
	}
	var k rowKey
	for _, h := range rec.Headers {
		switch h.Key {
		case "id":
			k.eventID = string(h.Value)
		case "binlog_gtid":
			k.gtid = string(h.Value)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.refused) < max(g.limit, 1) {
		g.refused = append(g.refused, refusedRecord{key: k, topic: rec.Topic, ts: rec.Timestamp})
	}
}

// reset forgets the refused records of the last session; marked rows stay.
func (g *timestampGuard) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refused = nil
}

// rowError returns the row error of a marked row, nil for any other.
func (g *timestampGuard) rowError(row *binlog.OutboxRow, txn *binlog.Txn) *route.RowError {
	if len(g.marked) == 0 {
		return nil
	}
	re := g.marked[rowKey{gtid: txn.GTID, eventID: string(row.EventID)}]
	if re == nil {
		return nil
	}
	c := *re
	c.Table = row.Database + "." + row.Table
	return &c
}

// judge marks, after a session failed with INVALID_TIMESTAMP, the refused
// records outside their topic's window at now. It returns how many rows
// it newly marked; 0 means none could be blamed (the window is not known
// well enough, or the rows were marked before and refused again), and the
// relay then stops with the brokers' error.
func (g *timestampGuard) judge(ctx context.Context, opts []kgo.Opt, now time.Time) int {
	g.mu.Lock()
	refused := g.refused
	g.refused = nil
	g.mu.Unlock()
	if len(refused) == 0 {
		return 0
	}
	topics := map[string]bool{}
	for _, r := range refused {
		topics[r.topic] = true
	}
	windows := kafka.ReadTimestampWindows(ctx, topics, opts...)
	if g.marked == nil {
		g.marked = map[rowKey]*route.RowError{}
	}
	n := 0
	for _, r := range refused {
		w := windows[r.topic]
		problem := w.Outside(r.ts, now, r.topic)
		if problem == nil {
			continue
		}
		if _, ok := g.marked[r.key]; ok {
			continue
		}
		g.marked[r.key] = &route.RowError{GTID: r.key.gtid, EventID: r.key.eventID, Kind: KindInvalidTimestamp, Err: problem}
		n++
	}
	return n
}

// forget drops marked rows of transactions the committed GTID set covers:
// they will not be read again.
func (g *timestampGuard) forget(covered func(gtid string) bool) {
	for k := range g.marked {
		if k.gtid != "" && covered(k.gtid) {
			delete(g.marked, k)
		}
	}
}

// covers reports whether set holds the single GTID g.
func covers(set *gtid.Set, g string) bool {
	one, err := gtid.Parse(set.Flavor(), g)
	return err == nil && set.Contains(one)
}

package relay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlog-router/binlog-router/internal/binlog"
	"github.com/binlog-router/binlog-router/internal/gtid"
	"github.com/binlog-router/binlog-router/internal/route"
)

// KindInvalidTimestamp is the row-error kind of a row whose record
// timestamp (created_at, or the commit time) the brokers refuse: more than
// the topic's message.timestamp.after.max.ms ahead of their clock, or more
// than its message.timestamp.before.max.ms behind.
const KindInvalidTimestamp route.Kind = "invalid_timestamp"

// Kafka's defaults of the timestamp window (4.x), used when the topic's
// configuration cannot be read.
const (
	defaultTimestampAfter  = time.Hour
	defaultTimestampBefore = unlimited
)

// unlimited marks a side of the window without a limit.
const unlimited = time.Duration(-1)

// timestampGuard turns INVALID_TIMESTAMP into row errors. The brokers
// refuse a whole record batch when one record's timestamp is outside their
// window, and franz-go fails every record of it with the same error, so
// the answer does not say which row it was. The guard notes the refused
// records (note, from franz-go's goroutines); when the session has failed
// with INVALID_TIMESTAMP, it reads the window of their topics and marks
// the records outside it (judge). The next session, which starts from the
// committed checkpoint like after any Kafka error, meets those rows again,
// and the relay handles each as a row error (rowError): a stop naming the
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

// timestampWindow is a topic's message.timestamp.{after,before}.max.ms
// (unlimited: no limit) and where they come from.
type timestampWindow struct {
	after, before time.Duration
	logAppend     bool   // message.timestamp.type=LogAppendTime: the broker sets it
	note          string // why the defaults are used, if they are
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
	windows := readWindows(ctx, opts, topics)
	if g.marked == nil {
		g.marked = map[rowKey]*route.RowError{}
	}
	n := 0
	for _, r := range refused {
		w := windows[r.topic]
		problem := w.outside(r.ts, now, r.topic)
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

// outside returns why ts is outside the window at now, or nil.
func (w timestampWindow) outside(ts, now time.Time, topic string) error {
	if w.logAppend {
		return nil
	}
	switch {
	case w.after != unlimited && ts.After(now.Add(w.after)):
		return fmt.Errorf("its record timestamp %s (created_at, or the commit time without one) is %s ahead of now; the brokers refuse timestamps more than message.timestamp.after.max.ms (%s%s) ahead of their clock (INVALID_TIMESTAMP); correct the row's created_at, or raise message.timestamp.after.max.ms on topic %s",
			ts.UTC().Format(time.RFC3339Nano), ts.Sub(now).Round(time.Second), w.after, w.note, topic)
	case w.before != unlimited && ts.Before(now.Add(-w.before)):
		return fmt.Errorf("its record timestamp %s (created_at, or the commit time without one) is %s behind now; the brokers refuse timestamps more than message.timestamp.before.max.ms (%s%s) behind their clock (INVALID_TIMESTAMP); correct the row's created_at, or raise message.timestamp.before.max.ms on topic %s",
			ts.UTC().Format(time.RFC3339Nano), now.Sub(ts).Round(time.Second), w.before, w.note, topic)
	}
	return nil
}

// readWindows reads the timestamp window of each topic; a topic whose
// configuration cannot be read gets Kafka's defaults, and says so.
func readWindows(ctx context.Context, opts []kgo.Opt, topics map[string]bool) map[string]timestampWindow {
	out := map[string]timestampWindow{}
	fallback := func(why string) timestampWindow {
		return timestampWindow{after: defaultTimestampAfter, before: defaultTimestampBefore,
			note: ", Kafka's default: the topic's setting could not be read: " + why}
	}
	var names []string
	for t := range topics {
		names = append(names, t)
		out[t] = fallback("not described")
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return out
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rcs, err := kadm.NewClient(cl).DescribeTopicConfigs(ctx, names...)
	if err != nil {
		for _, t := range names {
			out[t] = fallback(err.Error())
		}
		return out
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			out[rc.Name] = fallback(rc.Err.Error())
			continue
		}
		w := timestampWindow{after: defaultTimestampAfter, before: defaultTimestampBefore}
		for _, c := range rc.Configs {
			switch c.Key {
			case "message.timestamp.type":
				w.logAppend = c.MaybeValue() == "LogAppendTime"
			case "message.timestamp.after.max.ms":
				w.after = millis(c.MaybeValue(), w.after)
			case "message.timestamp.before.max.ms":
				w.before = millis(c.MaybeValue(), w.before)
			}
		}
		out[rc.Name] = w
	}
	return out
}

// millis parses a millisecond setting: def when unparsable, unlimited
// for a negative value or one beyond what a Duration holds (Kafka writes
// "no limit" as Long.MAX_VALUE).
func millis(v string, def time.Duration) time.Duration {
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		return def
	case n < 0 || n > int64(math.MaxInt64/time.Millisecond):
		return unlimited
	}
	return time.Duration(n) * time.Millisecond
}

// covers reports whether set holds the single GTID g.
func covers(set *gtid.Set, g string) bool {
	one, err := gtid.Parse(set.Flavor(), g)
	return err == nil && set.Contains(one)
}

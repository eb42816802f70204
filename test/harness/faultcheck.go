package harness

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Delivered is one record as a downstream read_committed consumer saw it.
type Delivered struct {
	ID, Topic, Key, GTID string
	Seq                  int
	Partition            int32
	Offset               int64
}

// Collector reads the outbox topics through a consumer in the background
// for the whole test, keeping every record in arrival order
// (which is partition order within a partition).
type Collector struct {
	cons   *Consumer
	cancel context.CancelFunc
	done   chan struct{}

	Mu   sync.Mutex
	Recs []Delivered
	IDs  map[string]int
	bad  []string // records that are not outbox events of the test
}

// NewCollector starts reading, read_committed, every topic topicRegex
// matches until the end of the test.
func NewCollector(t testing.TB, brokers []string, topicRegex string) *Collector {
	t.Helper()
	cons := NewConsumer(t, brokers, topicRegex)
	ctx, cancel := context.WithCancel(context.Background())
	c := &Collector{cons: cons, cancel: cancel, done: make(chan struct{}), IDs: map[string]int{}}
	go c.run(ctx)
	t.Cleanup(c.close)
	return c
}

func (c *Collector) run(ctx context.Context) {
	defer close(c.done)
	for ctx.Err() == nil {
		fs := c.cons.cl.PollFetches(ctx)
		c.Mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			d := Delivered{Topic: r.Topic, Key: string(r.Key), Partition: r.Partition, Offset: r.Offset}
			d.ID, _ = Header(r, "id")
			d.GTID, _ = Header(r, "binlog_gtid")
			var p struct{ Seq int }
			if d.ID == "" || json.Unmarshal(r.Value, &p) != nil {
				c.bad = append(c.bad, fmt.Sprintf("%s/%d@%d key %q value %.80q", r.Topic, r.Partition, r.Offset, r.Key, r.Value))
				return
			}
			d.Seq = p.Seq
			c.Recs = append(c.Recs, d)
			c.IDs[d.ID]++
		})
		c.Mu.Unlock()
	}
}

// close ends the background reading (before the consumer's client is
// closed: cleanups run last registered first).
func (c *Collector) close() {
	c.cancel()
	<-c.done
}

// Distinct is the number of different event ids read so far.
func (c *Collector) Distinct() int {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return len(c.IDs)
}

// Count is the number of records read so far.
func (c *Collector) Count() int {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return len(c.Recs)
}

// Missing is how many of want have not been read yet.
func (c *Collector) Missing(want map[string]OutboxRow) int {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	n := 0
	for id := range want {
		if c.IDs[id] == 0 {
			n++
		}
	}
	return n
}

// WaitProgress waits until n more distinct events than now were read;
// it fails at once if the router r exits.
func (c *Collector) WaitProgress(t testing.TB, r *Router, n int, timeout time.Duration, what string) {
	t.Helper()
	from := c.Distinct()
	Eventually(t, timeout, fmt.Sprintf("%s: %d new events after %d", what, n, from),
		func() bool { return c.Distinct() >= from+n || !r.Running() })
	r.MustRun(what)
}

// WaitAll waits until every row of want was read.
func (c *Collector) WaitAll(t testing.TB, want map[string]OutboxRow, timeout time.Duration) {
	t.Helper()
	if err := Poll(timeout, func() bool { return c.Missing(want) == 0 }); err != nil {
		t.Errorf("reading all %d committed events: %d still missing after %s", len(want), c.Missing(want), timeout)
	}
}

// Settle waits until nothing new arrived for d (a late duplicate would)
// and returns every record read; records that are no outbox event of the
// test fail it.
func (c *Collector) Settle(t testing.TB, d time.Duration) []Delivered {
	t.Helper()
	last, since := c.Count(), time.Now()
	for time.Since(since) < d {
		time.Sleep(50 * time.Millisecond)
		if n := c.Count(); n != last {
			last, since = n, time.Now()
		}
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for _, b := range c.bad {
		t.Errorf("unexpected record %s", b)
	}
	return append([]Delivered(nil), c.Recs...)
}

// Verdict is what CheckDelivery found.
type Verdict struct {
	Events, Records, Lost, Duplicated, Unknown, Disordered int
}

func (v Verdict) String() string {
	return fmt.Sprintf("events checked %d, records read %d, lost %d, duplicated %d, unknown %d, out of order %d",
		v.Events, v.Records, v.Lost, v.Duplicated, v.Unknown, v.Disordered)
}

// CheckDelivery compares what a consumer read with the committed outbox
// rows: every row read (lost otherwise), no record that is not a row,
// each record's key and sequence number those of its row, and, within a
// topic and key, sequence numbers increasing on first occurrences. A
// repeated event is reported unless dupOK accepts it (nil accepts none).
func CheckDelivery(t testing.TB, want map[string]OutboxRow, got []Delivered, dupOK func(Delivered) bool) Verdict {
	t.Helper()
	v := Verdict{Events: len(want), Records: len(got)}
	seen := map[string]int{}
	first := map[string]Delivered{} // event id -> its first record
	last := map[string]int{}        // topic/key -> last sequence number
	var lost, unknown, dups, disorder, wrong []string
	for _, d := range got {
		row, ok := want[d.ID]
		if !ok {
			v.Unknown++
			unknown = append(unknown, fmt.Sprintf("%s (%s key %s, gtid %s)", d.ID, d.Topic, d.Key, d.GTID))
			continue
		}
		if d.Key != row.Agg || d.Seq != row.Seq {
			wrong = append(wrong, fmt.Sprintf("%s: key %s seq %d, row has %s seq %d", d.ID, d.Key, d.Seq, row.Agg, row.Seq))
		}
		seen[d.ID]++
		if seen[d.ID] > 1 {
			v.Duplicated++
			if dupOK == nil || !dupOK(d) {
				f := first[d.ID]
				dups = append(dups, fmt.Sprintf("%s (%s/%d@%d, first at %d@%d, gtid %s)", d.ID, d.Topic, d.Partition, d.Offset, f.Partition, f.Offset, d.GTID))
			}
			continue
		}
		first[d.ID] = d
		k := d.Topic + "/" + d.Key
		if p, ok := last[k]; ok && d.Seq <= p {
			v.Disordered++
			disorder = append(disorder, fmt.Sprintf("%s: seq %d after %d (%s/%d@%d)", k, d.Seq, p, d.Topic, d.Partition, d.Offset))
		}
		last[k] = d.Seq
	}
	for id := range want {
		if seen[id] == 0 {
			v.Lost++
			lost = append(lost, id)
		}
	}
	sort.Strings(lost)
	report := func(what string, xs []string) {
		if len(xs) > 0 {
			t.Errorf("%d %s, e.g. %v", len(xs), what, xs[:min(len(xs), 5)])
		}
	}
	report("committed outbox rows never delivered (lost)", lost)
	report("records that are no committed outbox row", unknown)
	report("records repeated outside the allowed bound", dups)
	report("records out of per-aggregate order", disorder)
	report("records not matching their row", wrong)
	noteDelivery(t, v, len(dups))
	return v
}

// faultStats is one test's figures for its machine-readable line: the
// worst of its delivery checks (each reader's check of the same rows is
// one) and the longest time routing took to resume after a fault.
type faultStats struct {
	checks     int
	lost       int
	duplicated int // repeated outside the allowed bound
	allowed    int // repeated within it (at-least-once)
	recovery   time.Duration
}

var (
	faultStatsMu sync.Mutex
	faultStatsOf = map[testing.TB]*faultStats{}
)

// statsOf returns t's figures, registering at first use the cleanup
// that prints them. The caller holds faultStatsMu.
func statsOf(t testing.TB) *faultStats {
	s := faultStatsOf[t]
	if s == nil {
		s = &faultStats{}
		faultStatsOf[t] = s
		t.Cleanup(func() { printFaultStats(t) })
	}
	return s
}

// noteDelivery records a delivery check's verdict; dups is how many of
// its repeated records were outside the allowed bound.
func noteDelivery(t testing.TB, v Verdict, dups int) {
	faultStatsMu.Lock()
	defer faultStatsMu.Unlock()
	s := statsOf(t)
	s.checks++
	s.lost = max(s.lost, v.Lost)
	s.duplicated = max(s.duplicated, dups)
	s.allowed = max(s.allowed, v.Duplicated-dups)
}

// NoteRecovery records, for the test's line, that routing resumed d after
// a fault began.
func NoteRecovery(t testing.TB, d time.Duration) {
	faultStatsMu.Lock()
	defer faultStatsMu.Unlock()
	s := statsOf(t)
	s.recovery = max(s.recovery, d)
}

// printFaultStats logs, as the test ends, the one line `make test-faults`
// (test/faultstats) reads from the output of `go test -v` or `-json`:
//
//	faultstats: suite=TestX checks=3 lost=0 duplicated=0 allowed=0 recovery=12.3s
//
// lost and duplicated are the largest any one check of the test found;
// recovery is "-" when the test timed none.
func printFaultStats(t testing.TB) {
	faultStatsMu.Lock()
	s := *faultStatsOf[t]
	delete(faultStatsOf, t)
	faultStatsMu.Unlock()
	rec := "-"
	if s.recovery > 0 {
		rec = fmt.Sprintf("%.1fs", s.recovery.Seconds())
	}
	t.Logf("faultstats: suite=%s checks=%d lost=%d duplicated=%d allowed=%d recovery=%s",
		strings.ReplaceAll(t.Name(), " ", "_"), s.checks, s.lost, s.duplicated, s.allowed, rec)
}

// OutboxRow is one committed outbox row as the database has it.
type OutboxRow struct {
	ID, Agg, Type string
	Seq           int
}

// CommittedRows reads the outbox table: every row a router must deliver.
func CommittedRows(t testing.TB, db *sql.DB) map[string]OutboxRow {
	t.Helper()
	rows, err := db.Query("SELECT CAST(event_id AS CHAR), aggregate_id, event_type, payload FROM outbox")
	if err != nil {
		t.Fatalf("reading the outbox table: %v", err)
	}
	defer rows.Close()
	out := map[string]OutboxRow{}
	for rows.Next() {
		var r OutboxRow
		var payload sql.NullString
		if err := rows.Scan(&r.ID, &r.Agg, &r.Type, &payload); err != nil {
			t.Fatal(err)
		}
		var p struct{ Seq int }
		if err := json.Unmarshal([]byte(payload.String), &p); err != nil {
			t.Fatalf("payload of %s: %v", r.ID, err)
		}
		r.Seq = p.Seq
		out[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// FinishRun ends a fault test's load, waits up to wait for every committed
// row, stops the router with SIGTERM (exit 0 expected) and checks, through
// the collector, that each row was delivered exactly once and in order.
func FinishRun(t testing.TB, db *sql.DB, l *Load, col *Collector, r *Router, wait time.Duration) Verdict {
	t.Helper()
	l.Stop()
	t.Logf("load: %s", l)
	want := CommittedRows(t, db)
	col.WaitAll(t, want, wait)
	r.MustRun("end")
	if code := r.Stop(30 * time.Second); code != 0 {
		t.Errorf("SIGTERM: exit code %d, want 0", code)
	}
	return CheckDelivery(t, want, col.Settle(t, time.Second), nil)
}

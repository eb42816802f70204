package harness

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Fault tests run a short variant in `make test` and a long one with
// FAULTS=long (`make test-faults`).
func FaultsLong() bool { return os.Getenv("FAULTS") == "long" }

// ByMode returns short, or long under FAULTS=long.
func ByMode[T any](short, long T) T {
	if FaultsLong() {
		return long
	}
	return short
}

// FaultRand returns the test's random source, seeded from SEED when set
// (to replay a failure) and otherwise from the clock; the seed is logged.
func FaultRand(t testing.TB) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// RandDur is a random duration in [lo, hi].
func RandDur(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// Eventually polls cond every 20 ms until it holds or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := Poll(timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func Poll(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not reached within %s", timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Writer inserts outbox rows for a set of aggregates. Every row's payload
// carries its aggregate's sequence number, which grows in commit order,
// so that per-aggregate order can be checked downstream. Not safe for
// concurrent use; two writers must use different prefixes.
type Writer struct {
	DB     *sql.DB
	rng    *rand.Rand
	prefix string   // aggregate ids are prefix-N
	Types  []string // event types (topics), picked at random per row
	pad    string   // filler making payloads larger
	seq    []int    // next sequence number per aggregate

	// Ballast, when set, is written BallastRows times (default once) to
	// table ballast with every statement of up to 1000 outbox rows: binlog
	// volume the router reads but does not route.
	Ballast     []byte
	BallastRows int
}

func NewWriter(db *sql.DB, rng *rand.Rand, prefix string, aggregates, padBytes int, types ...string) *Writer {
	if len(types) == 0 {
		types = []string{"Created", "Changed"}
	}
	return &Writer{DB: db, rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), prefix: prefix,
		Types: types, pad: strings.Repeat("x", padBytes), seq: make([]int, aggregates)}
}

// Tx commits one transaction with a business row and n outbox rows in
// statements of at most 1000 rows. Sequence numbers are used up even when
// the transaction fails: gaps are fine, reordering is not.
func (w *Writer) Tx(ctx context.Context, n int) error {
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (customer, total) VALUES ('load', 1)"); err != nil {
		return err
	}
	for done := 0; done < n; {
		for range max(w.BallastRows, 1) {
			if len(w.Ballast) == 0 {
				break
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO ballast (data) VALUES (?)", w.Ballast); err != nil {
				return err
			}
		}
		k := min(n-done, 1000)
		var sb strings.Builder
		args := make([]any, 0, 4*k)
		sb.WriteString("INSERT INTO outbox (event_id, aggregate_type, aggregate_id, event_type, payload) VALUES ")
		for i := 0; i < k; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString("(?, 'order', ?, ?, ?)")
			a := w.rng.IntN(len(w.seq))
			w.seq[a]++
			agg := fmt.Sprintf("%s-%d", w.prefix, a)
			args = append(args, uuid.NewString(), agg, w.Types[w.rng.IntN(len(w.Types))],
				fmt.Sprintf(`{"agg":%q,"seq":%d,"pad":%q}`, agg, w.seq[a], w.pad))
		}
		if _, err := tx.ExecContext(ctx, sb.String(), args...); err != nil {
			return err
		}
		done += k
	}
	return tx.Commit()
}

// Load is a background application inserting small transactions (1 to
// maxRows outbox rows) at a steady rate, so that faults land while the
// router has Kafka transactions open. Errors (a server restart) are
// counted and retried after a pause: the outbox table is the truth of what
// was committed.
type Load struct {
	w       *Writer
	rate    int // rows per second
	maxRows int

	Rows   atomic.Int64 // rows of transactions whose COMMIT returned nil
	errs   atomic.Int64
	mu     sync.Mutex
	lastEr error

	cancel context.CancelFunc
	done   chan struct{}
}

func StartLoad(t testing.TB, w *Writer, rowsPerSecond int) *Load {
	l := &Load{w: w, rate: rowsPerSecond, maxRows: 5, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.run(ctx)
	t.Cleanup(l.Stop)
	return l
}

func (l *Load) run(ctx context.Context) {
	defer close(l.done)
	next := time.Now()
	for ctx.Err() == nil {
		n := 1 + l.w.rng.IntN(l.maxRows)
		next = next.Add(time.Duration(n) * time.Second / time.Duration(l.rate))
		if d := time.Until(next); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return
			}
		} else if d < -time.Second {
			next = time.Now() // do not burst to catch up after an outage
		}
		if err := l.w.Tx(ctx, n); err != nil {
			if ctx.Err() != nil {
				return
			}
			l.errs.Add(1)
			l.mu.Lock()
			l.lastEr = err
			l.mu.Unlock()
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
			}
			continue
		}
		l.Rows.Add(int64(n))
	}
}

// Stop ends the load and waits for the transaction in progress.
func (l *Load) Stop() {
	l.cancel()
	<-l.done
}

func (l *Load) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d rows committed, %d failed transactions (last error: %v)", l.Rows.Load(), l.errs.Load(), l.lastEr)
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

// GTIDSeqs parses a MariaDB GTID position ("0-1-42,1-1-7") into the last
// sequence number per domain.
func GTIDSeqs(t testing.TB, s string) map[uint32]uint64 {
	t.Helper()
	out := map[uint32]uint64{}
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		d, n, ok := ParseGTID(g)
		if !ok {
			t.Fatalf("GTID %q in %q", g, s)
		}
		out[d] = max(out[d], n)
	}
	return out
}

func ParseGTID(g string) (domain uint32, seq uint64, ok bool) {
	parts := strings.Split(g, "-")
	if len(parts) != 3 {
		return 0, 0, false
	}
	d, err1 := strconv.ParseUint(parts[0], 10, 32)
	n, err2 := strconv.ParseUint(parts[2], 10, 64)
	return uint32(d), n, err1 == nil && err2 == nil
}

// rssKB is a process's resident set size from /proc.
func rssKB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// RSSSampler records the largest RSS of a process, sampled every 100 ms.
type RSSSampler struct {
	maxKB  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
}

func SampleRSS(pid int) *RSSSampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &RSSSampler{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if kb, err := rssKB(pid); err == nil && kb > s.maxKB.Load() {
				s.maxKB.Store(kb)
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the peak in MiB.
func (s *RSSSampler) Stop() float64 {
	s.cancel()
	<-s.done
	return float64(s.maxKB.Load()) / 1024
}

// RSSLimitMB bounds the router's memory in the fault tests: the race
// detector multiplies memory use several times.
func RSSLimitMB() float64 {
	if raceEnabled {
		return 300
	}
	return 150
}

// LogLine returns the first router log line containing s, or "".
func (r *Router) LogLine(s string) string { return LineWith(r.Out.String(), s) }

// LastLogLine returns the last router log line containing s, or "".
func (r *Router) LastLogLine(s string) string {
	lines := strings.Split(r.Out.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], s) {
			return lines[i]
		}
	}
	return ""
}

// LogCount counts the router log lines containing s.
func (r *Router) LogCount(s string) int { return strings.Count(r.Out.String(), s) }

// MustRun fails the test if the router exited.
func (r *Router) MustRun(what string) {
	r.t.Helper()
	if !r.Running() {
		r.t.Fatalf("%s: the router exited (%s); it must keep running", what, r.DescribeExit())
	}
}

// PID is the running router's process id.
func (r *Router) PID() int { return r.Cmd.Process.Pid }

// ArgsWith replaces the value of flag in args.
func ArgsWith(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == flag {
			out[i+1] = value
		}
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

package harness

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

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

// NewWriter writes rows for aggregates aggregates named prefix-N, with
// payloads padded by padBytes and event types types (Created and Changed
// when none are given).
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

// StartLoad starts writing through w at about rowsPerSecond until Stop
// or the end of the test.
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

// String counts what the load committed and what failed.
func (l *Load) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d rows committed, %d failed transactions (last error: %v)", l.Rows.Load(), l.errs.Load(), l.lastEr)
}

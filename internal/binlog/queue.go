package binlog

import (
	"context"
	"errors"
	"sync"
)

// ErrReaderStopped is what a consumer of a Queue returns when Take
// reports it closed: the reader returned, and its own error says why.
var ErrReaderStopped = errors.New("binlog reader stopped")

// Queue hands rows from the reader to the consumer without making either
// wait for the other while there is room: the reader appends to one
// growing Batch, the consumer takes all of it at once. When the consumer
// is busy (say, committing a Kafka transaction) transactions accumulate
// into a larger batch instead of stalling the reader; when it keeps up,
// every transaction is handed over as soon as it ends. The Batch is
// bounded by the maxRows and maxBytes given to NewQueue: once it holds
// that many rows or bytes the writer blocks until the consumer takes it.
// The bound is checked before each addition, so a batch can exceed
// maxBytes by its last row (and a single larger row fits alone).
//
// One goroutine writes (AddRow, EndTxn, Heartbeat, then Close): the
// Reader, or a test's source. One goroutine consumes (Take, Ready,
// Recycle, Err).
type Queue struct {
	maxRows, maxBytes int

	mu     sync.Mutex
	cur    Batch
	spare  Batch // slices of a recycled batch, for the next one
	last   int   // rows of the last batch taken: the capacity of a new one
	closed bool
	err    error

	ready chan struct{} // 1-buffered: something to take
	space chan struct{} // 1-buffered: the batch was taken
}

// NewQueue returns a Queue whose batches hold at most maxRows rows or
// maxBytes bytes (a single larger row still fits alone).
func NewQueue(maxRows, maxBytes int) *Queue {
	return &Queue{maxRows: max(maxRows, 1), maxBytes: max(maxBytes, 1),
		ready: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

// Ready is signalled when there may be something to take.
func (q *Queue) Ready() <-chan struct{} { return q.ready }

// Take returns everything queued (possibly nothing) and whether the
// reader has stopped; after the reader stopped and the queue is drained,
// Err says why.
func (q *Queue) Take() (b Batch, closed bool) {
	q.mu.Lock()
	if !q.cur.Empty() {
		b, q.cur = q.cur, Batch{}
		q.last = len(b.Rows)
	}
	closed = q.closed
	q.mu.Unlock()
	select {
	case q.space <- struct{}{}:
	default:
	}
	return b, closed
}

// Recycle hands the slices of a taken batch back to be filled again, so
// that a steady stream of batches allocates none. The caller must not use
// b, or rows of it, afterwards (values the rows pointed to, such as their
// byte slices and Txn, stay valid). Recycling is optional.
func (q *Queue) Recycle(b Batch) {
	clear(b.Rows) // no references into decoded packets stay behind
	clear(b.Done)
	q.mu.Lock()
	if cap(b.Rows) > cap(q.spare.Rows) {
		q.spare.Rows = b.Rows[:0]
	}
	if cap(b.Done) > cap(q.spare.Done) {
		q.spare.Done = b.Done[:0]
	}
	q.mu.Unlock()
}

// Err is the reader's error after the queue was closed.
func (q *Queue) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// Close marks the end of the stream with the writer's error (nil for a
// normal end): once the queue is drained, Take reports closed and Err
// returns err. Nothing may be written after Close.
func (q *Queue) Close(err error) {
	q.mu.Lock()
	q.closed, q.err = true, err
	q.mu.Unlock()
	q.signal()
}

func (q *Queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// wait blocks until the batch was taken or ctx ends.
func (q *Queue) wait(ctx context.Context) error {
	select {
	case <-q.space:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// full reports whether the current batch is at its bound. Caller holds mu.
func (q *Queue) full() bool {
	return len(q.cur.Rows) >= q.maxRows || q.cur.Bytes >= q.maxBytes
}

// txnSize is what a completed transaction counts against the byte bound,
// so that a stream of transactions without outbox rows is bounded too.
const txnSize = 128

// AddRow queues one outbox row of the open transaction r.Txn; size is
// what it counts against the byte bound and pos is the binlog position
// after it. It blocks while the batch is full, until the consumer takes
// it or ctx ends (then it returns ctx's error and the row is not queued).
func (q *Queue) AddRow(ctx context.Context, r OutboxRow, size int, pos Position) error {
	_, err := q.put(ctx, 1, func(b *Batch, _ int) { q.addRow(b, r, size, pos) })
	return err
}

// AddRows queues rows of the open transaction, in order, as AddRow would
// one by one (sizes[i] is what rows[i] counts against the byte bound), but
// taking the lock and signalling the consumer once for as many as fit. It
// returns how many it queued: all of them, unless ctx ended while the
// batch was full (then with ctx's error).
func (q *Queue) AddRows(ctx context.Context, rows []OutboxRow, sizes []int, pos Position) (int, error) {
	return q.put(ctx, len(rows), func(b *Batch, i int) { q.addRow(b, rows[i], sizes[i], pos) })
}

// addRow appends a row to b. Caller holds mu.
func (q *Queue) addRow(b *Batch, r OutboxRow, size int, pos Position) {
	if b.Rows == nil {
		b.Rows, q.spare.Rows = q.spare.Rows, nil
		if b.Rows == nil { // nothing recycled: size it like the last one
			b.Rows = make([]OutboxRow, 0, min(max(q.last, 16), q.maxRows))
		}
	}
	b.Rows = append(b.Rows, r)
	b.Bytes += size
	b.Open, b.Pos, b.Heartbeat = true, pos, false
}

// EndTxn queues the end of transaction t, which must come after every
// row of t was queued: the consumer moves its GTID set over t when it
// sees the end, so a row queued after it would not be covered. pos is the
// binlog position after t. It blocks as AddRow does.
func (q *Queue) EndTxn(ctx context.Context, t *Txn, pos Position) error {
	_, err := q.put(ctx, 1, func(b *Batch, _ int) {
		if b.Done == nil {
			b.Done, q.spare.Done = q.spare.Done, nil
		}
		b.Done = append(b.Done, t)
		b.Bytes += txnSize
		b.Open, b.Pos, b.Heartbeat = false, pos, false
	})
	return err
}

// put applies add(b, i) for i from 0 to n-1, in order, to the current
// batch, as many at a time as it has room for, signalling the consumer
// after each run; add runs with mu held. It returns how many it applied:
// n, unless ctx ended while the batch was full (then with ctx's error).
func (q *Queue) put(ctx context.Context, n int, add func(b *Batch, i int)) (int, error) {
	done := 0
	for {
		q.mu.Lock()
		for done < n && !q.full() {
			add(&q.cur, done)
			done++
		}
		q.mu.Unlock()
		q.signal()
		if done == n {
			return done, nil
		}
		if err := q.wait(ctx); err != nil {
			return done, err
		}
	}
}

// Heartbeat notes that the source is idle and caught up at pos (outside
// a transaction: inside one it is ignored). It never blocks.
func (q *Queue) Heartbeat(pos Position) {
	q.mu.Lock()
	if !q.cur.Open {
		q.cur.Heartbeat, q.cur.Pos = true, pos
	}
	q.mu.Unlock()
	q.signal()
}

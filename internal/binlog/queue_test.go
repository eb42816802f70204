package binlog

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQueueCoalescesAndBounds(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(3, 1<<20)
	t1, t2 := &Txn{GTID: "0-1-1"}, &Txn{GTID: "0-1-2"}
	require.NoError(t, q.AddRow(ctx, OutboxRow{Txn: t1}, 10, Position{}))
	require.NoError(t, q.EndTxn(ctx, t1, Position{Pos: 1}))
	require.NoError(t, q.AddRow(ctx, OutboxRow{Txn: t2}, 10, Position{}))
	require.NoError(t, q.AddRow(ctx, OutboxRow{Txn: t2}, 10, Position{Pos: 2}))

	// Full: the next row waits until the batch is taken.
	added := make(chan error, 1)
	go func() { added <- q.AddRow(ctx, OutboxRow{Txn: t2}, 10, Position{Pos: 3}) }()
	select {
	case err := <-added:
		t.Fatalf("addRow on a full queue returned %v before a Take", err)
	case <-time.After(50 * time.Millisecond):
	}
	b, closed := q.Take()
	assert.False(t, closed)
	assert.Len(t, b.Rows, 3)
	assert.Equal(t, []*Txn{t1}, b.Done)
	assert.True(t, b.Open, "t2 is still open")
	assert.Equal(t, uint32(2), b.Pos.Pos)
	require.NoError(t, <-added)

	require.NoError(t, q.EndTxn(ctx, t2, Position{Pos: 4}))
	b, _ = q.Take()
	assert.Len(t, b.Rows, 1)
	assert.Equal(t, []*Txn{t2}, b.Done)
	assert.False(t, b.Open)

	q.Heartbeat(Position{Pos: 5})
	b, _ = q.Take()
	assert.True(t, b.Heartbeat)
	assert.False(t, b.Empty())

	q.Close(context.Canceled)
	b, closed = q.Take()
	assert.True(t, b.Empty())
	assert.True(t, closed)
	assert.ErrorIs(t, q.Err(), context.Canceled)
}

func TestQueueFullWaitHonoursContext(t *testing.T) {
	q := NewQueue(1, 1<<20)
	require.NoError(t, q.AddRow(context.Background(), OutboxRow{}, 1, Position{}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, q.AddRow(ctx, OutboxRow{}, 1, Position{}), context.DeadlineExceeded)
}

// TestQueueConcurrentOrder: a reader and a taker in parallel see every row
// once, in order, and the byte bound holds for transactions without rows.
func TestQueueConcurrentOrder(t *testing.T) {
	q := NewQueue(16, 4*txnSize)
	const n = 5000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx := context.Background()
		for i := 0; i < n; i++ {
			txn := &Txn{GTID: "x"}
			if i%2 == 0 {
				if err := q.AddRow(ctx, OutboxRow{EventID: []byte{byte(i), byte(i >> 8)}, Txn: txn}, 1, Position{}); err != nil {
					t.Error(err)
					return
				}
			}
			if err := q.EndTxn(ctx, txn, Position{}); err != nil {
				t.Error(err)
				return
			}
		}
		q.Close(nil)
	}()
	rows, txns := 0, 0
	for {
		<-q.Ready()
		b, closed := q.Take()
		assert.LessOrEqual(t, len(b.Done), 5, "byte bound counts transactions")
		for _, r := range b.Rows {
			assert.Equal(t, []byte{byte(rows * 2), byte(rows * 2 >> 8)}, r.EventID)
			rows++
		}
		txns += len(b.Done)
		if closed { // the reader closed after its last put: nothing follows
			break
		}
	}
	wg.Wait()
	assert.Equal(t, n/2, rows)
	assert.Equal(t, n, txns)
}

// A recycled batch's slices are filled again, cleared of what they held.
func TestQueueRecycle(t *testing.T) {
	ctx := context.Background()
	q := NewQueue(100, 1<<20)
	t1 := &Txn{GTID: "0-1-1"}
	for range 3 {
		require.NoError(t, q.AddRow(ctx, OutboxRow{Txn: t1, Payload: []byte("x")}, 1, Position{}))
	}
	require.NoError(t, q.EndTxn(ctx, t1, Position{}))
	b, _ := q.Take()
	rows := b.Rows[:cap(b.Rows)]
	q.Recycle(b)
	assert.Nil(t, rows[0].Payload, "recycled rows keep no references")

	e, _ := q.Take()
	assert.True(t, e.Empty(), "an empty take keeps the spare slices")
	t2 := &Txn{GTID: "0-1-2"}
	require.NoError(t, q.AddRow(ctx, OutboxRow{Txn: t2}, 1, Position{}))
	b, _ = q.Take()
	require.Len(t, b.Rows, 1)
	assert.Same(t, &rows[0], &b.Rows[0], "the recycled slice is reused")
	assert.Same(t, t2, b.Rows[0].Txn)
}

// AddRows queues what fits, waits for a Take, then queues the rest, in
// order; when ctx ends while the batch is full it reports how many rows
// it queued.
func TestQueueAddRows(t *testing.T) {
	ctx := context.Background()
	txn := &Txn{GTID: "0-1-1"}
	rows := make([]OutboxRow, 5)
	for i := range rows {
		rows[i] = OutboxRow{EventID: []byte{byte(i)}, Txn: txn}
	}
	sizes := []int{1, 1, 1, 1, 1}
	q := NewQueue(3, 1<<20)
	added := make(chan error, 1)
	go func() {
		n, err := q.AddRows(ctx, rows, sizes, Position{Pos: 7})
		if err == nil && n != len(rows) {
			err = fmt.Errorf("queued %d rows, want %d", n, len(rows))
		}
		added <- err
	}()
	var got []byte
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < len(rows) && time.Now().Before(deadline) {
		<-q.Ready()
		b, _ := q.Take()
		if len(b.Rows) > 3 {
			t.Fatalf("batch of %d rows, bound 3", len(b.Rows))
		}
		for _, r := range b.Rows {
			got = append(got, r.EventID[0])
		}
		if len(b.Rows) > 0 && (b.Pos.Pos != 7 || !b.Open || b.Bytes != len(b.Rows)) {
			t.Fatalf("batch pos %d, open %v, bytes %d", b.Pos.Pos, b.Open, b.Bytes)
		}
	}
	require.NoError(t, <-added)
	assert.Equal(t, []byte{0, 1, 2, 3, 4}, got)

	q = NewQueue(2, 1<<20)
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	n, err := q.AddRows(cctx, rows, sizes, Position{})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 2, n)
	b, _ := q.Take()
	assert.Len(t, b.Rows, 2)
}

// BenchmarkQueue hands rows of ten-row rows events to a consumer that
// takes and recycles batches: row by row (AddRow) or an event's rows at
// once (AddRows, what the stream does). Per row.
func BenchmarkQueue(b *testing.B) {
	txn := &Txn{GTID: "0-1-1"}
	rows := make([]OutboxRow, 10)
	sizes := make([]int, 10)
	for i := range rows {
		rows[i] = OutboxRow{Payload: make([]byte, 500), Txn: txn}
		sizes[i] = 700
	}
	for _, together := range []bool{false, true} {
		name := "AddRow"
		if together {
			name = "AddRows"
		}
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			q := NewQueue(4096, 4<<20)
			var wg sync.WaitGroup
			wg.Go(func() {
				for ctx.Err() == nil {
					select {
					case <-q.Ready():
					case <-ctx.Done():
						return
					}
					if bt, _ := q.Take(); !bt.Empty() {
						q.Recycle(bt)
					}
				}
			})
			b.ReportAllocs()
			for b.Loop() {
				if together {
					if _, err := q.AddRows(ctx, rows, sizes, Position{}); err != nil {
						b.Fatal(err)
					}
					continue
				}
				for i := range rows {
					if err := q.AddRow(ctx, rows[i], sizes[i], Position{}); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(rows)), "ns/row")
			cancel()
			wg.Wait()
		})
	}
}

package kafka

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
)

func TestIDSet(t *testing.T) {
	s := NewIDSet()
	id := []byte("0b1d4c1e-7a43-4a8e-9f0e-2f5d8a0c7b11")
	s.Add(id)
	s.Add(id)
	assert.Equal(t, 1, s.Len(), "twice is once")
	assert.True(t, s.Has(id))
	assert.False(t, s.Has([]byte("0B1D4C1E-7A43-4A8E-9F0E-2F5D8A0C7B11")), "upper case is another id")
	s.Add([]byte("0B1D4C1E-7A43-4A8E-9F0E-2F5D8A0C7B11"))
	s.Add([]byte("order-42"))
	assert.True(t, s.Has([]byte("order-42")))
	assert.False(t, s.Has([]byte("0b1d4c1e-7a43-4a8e-9f0e-2f5d8a0c7b12")))
	assert.False(t, s.Has([]byte("0b1d4c1e-7a43-4a8e-9f0e-2f5d8a0c7bzz")), "not hex: kept as text, not confused")
	assert.Equal(t, 3, s.Len())

	// Adding after a lookup, and duplicates filling the reserved room.
	s.Add([]byte("0b1d4c1e-7a43-4a8e-9f0e-2f5d8a0c7b12"))
	assert.True(t, s.Has([]byte("0b1d4c1e-7a43-4a8e-9f0e-2f5d8a0c7b12")), "added after a lookup")
	r := NewIDSet()
	r.reserve(4)
	ids := make([][]byte, 4)
	for i := range ids {
		ids[i] = []byte(uuid.NewString())
	}
	for range 5 {
		for _, id := range ids[:3] {
			r.Add(id)
		}
	}
	assert.Equal(t, 4, cap(r.uuids), "duplicates were dropped instead of growing the array")
	assert.Equal(t, 3, r.Len())
	for _, id := range ids[:3] {
		assert.True(t, r.Has(id))
	}
	assert.False(t, r.Has(ids[3]))
}

// TestIDSetMemory measures the heap an id set holds per UUID id and the
// time to build and query it: 1,000,000 ids, or IDSET_IDS of them
// (docs/recover.md gives 10,000,000: IDSET_IDS=10000000 go test -run
// TestIDSetMemory -v ./internal/kafka/).
func TestIDSetMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement of heap per id: run without -short")
	}
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("IDSET_IDS")); err == nil && v > 0 {
		n = v
	}
	ids := make([][16]byte, n) // the ids themselves, outside the measurement
	for i := range ids {
		ids[i] = uuid.New()
	}
	var text [36]byte
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	began := time.Now()
	s := NewIDSet()
	s.reserve(n)
	for i := range ids {
		encodeUUID(&text, ids[i])
		s.Add(text[:])
	}
	added := time.Since(began)
	began = time.Now()
	assert.Equal(t, n, s.Len())
	sealed := time.Since(began)
	runtime.GC()
	runtime.ReadMemStats(&after)
	began = time.Now()
	for i := 0; i < n; i += 10 {
		encodeUUID(&text, ids[i])
		if !s.Has(text[:]) {
			t.Fatalf("id %d not found", i)
		}
	}
	lookup := time.Since(began) / (time.Duration(n / 10))
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
	t.Logf("%d UUID ids: %.1f bytes of heap per id (%.0f MB); added in %s, sorted in %s, %s per lookup",
		s.Len(), per, float64(after.HeapAlloc-before.HeapAlloc)/1e6, added.Round(time.Millisecond), sealed.Round(time.Millisecond), lookup)
	assert.Less(t, per, 20.0, fmt.Sprintf("%.1f bytes per id", per))
	runtime.KeepAlive(s)
}

// encodeUUID writes u's canonical lower-case text.
func encodeUUID(dst *[36]byte, u [16]byte) {
	copy(dst[:], uuid.UUID(u).String())
}

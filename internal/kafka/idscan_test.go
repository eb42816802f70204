package kafka

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
)

func TestIDSet(t *testing.T) {
	s := NewIDSet()
	id := []byte("0b1d4c1e-7a43-4a8e-9f0e-2f5d8a0c7b11")
	assert.True(t, s.Add(id))
	assert.False(t, s.Add(id), "twice")
	assert.True(t, s.Has(id))
	assert.False(t, s.Has([]byte("0B1D4C1E-7A43-4A8E-9F0E-2F5D8A0C7B11")), "upper case is another id")
	assert.True(t, s.Add([]byte("0B1D4C1E-7A43-4A8E-9F0E-2F5D8A0C7B11")))
	assert.True(t, s.Add([]byte("order-42")))
	assert.True(t, s.Has([]byte("order-42")))
	assert.False(t, s.Has([]byte("0b1d4c1e-7a43-4a8e-9f0e-2f5d8a0c7b12")))
	assert.False(t, s.Has([]byte("0b1d4c1e-7a43-4a8e-9f0e-2f5d8a0c7bzz")), "not hex: kept as text, not confused")
	assert.Equal(t, 3, s.Len())
}

// TestIDSetMemory measures the heap an id set holds per UUID id
// (docs/recover.md states it): go test -run TestIDSetMemory -v.
func TestIDSetMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement of heap per id, not a check: run without -short (go test -run TestIDSetMemory -v)")
	}
	const n = 1_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := NewIDSet()
	for range n {
		s.Add([]byte(uuid.NewString()))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%d UUID ids: %.1f bytes of heap per id", s.Len(), per)
	assert.Less(t, per, 100.0, fmt.Sprintf("%.1f bytes per id", per))
	runtime.KeepAlive(s)
}

package recovery

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPacer: without a cap nothing waits and chunks keep their size;
// with one a chunk is at most a second's worth and the rows read are due
// at rows/rate seconds after the start.
func TestPacer(t *testing.T) {
	none := newPacer(0)
	assert.Equal(t, 1000, none.chunk(1000))
	assert.Zero(t, none.due(1_000_000))

	p := newPacer(100)
	p.start = time.Now()
	assert.Equal(t, 100, p.chunk(1000))
	assert.Equal(t, 50, p.chunk(50))
	d := p.due(300)
	assert.InDelta(t, 3*time.Second, d, float64(100*time.Millisecond), "300 rows at 100/s: due 3 s after the start")
	p.start = time.Now().Add(-10 * time.Second)
	assert.Zero(t, p.due(300), "behind the cap: no wait")
}

// TestKeyProgress: the rows and time left are the part of the key range
// from the first key read to the largest not yet reached; keys that are
// not integers give no estimate.
func TestKeyProgress(t *testing.T) {
	kp := &keyProgress{ok: true, max: 1100, begin: time.Now().Add(-10 * time.Second)}
	_, _, ok := kp.left("100")
	assert.False(t, ok, "nothing read yet")
	kp.read("101", 250)
	rows, d, ok := kp.left("350") // a quarter of 101..1100 after 10 s
	assert.True(t, ok)
	assert.InDelta(t, 750, rows, 10)
	assert.InDelta(t, 30*time.Second, d, float64(time.Second))
	rows, d, ok = kp.left("1100")
	assert.True(t, ok)
	assert.Zero(t, rows)
	assert.Zero(t, d)

	uuids := &keyProgress{ok: true, max: 5}
	uuids.read("0b6f9a1e-8c1b-4b8e-9f4e-2d5c7a9e1f00", 10)
	_, _, ok = uuids.left("0b6f9a1e-8c1b-4b8e-9f4e-2d5c7a9e1f99")
	assert.False(t, ok)
}

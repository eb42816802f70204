package binlog

// spares keeps two slices of recycled batches for new ones to fill. One
// would not do: the reader starts a batch while the consumer still holds
// the one before, and a batch that only ended transactions returns no row
// slice, so after it the single spare would be empty and a batch would
// make a new slice. Each slice is at most what a batch holds, so the
// spares are bounded by the queue's bounds.
type spares[T any] [2][]T

// get removes and returns the larger spare, or nil when there is none.
func (s *spares[T]) get() []T {
	i := 0
	if cap(s[1]) > cap(s[0]) {
		i = 1
	}
	b := s[i]
	s[i] = nil
	return b
}

// put keeps b, emptied, in place of the smaller spare if b is larger.
func (s *spares[T]) put(b []T) {
	i := 0
	if cap(s[1]) < cap(s[0]) {
		i = 1
	}
	if cap(b) > cap(s[i]) {
		s[i] = b[:0]
	}
}

package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

const (
	swarLo = 0x0101010101010101
	swarHi = 0x8080808080808080
)

// plain marks the bytes that stand for themselves inside a JSON string:
// ASCII but '"', '\\' and the control characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// PlainEnd returns the index of the first byte of b at or after i that
// does not stand for itself inside a JSON string ('"', '\\', a control
// character, or a byte >= 0x80 that starts a UTF-8 sequence), or len(b)
// when there is none.
func PlainEnd(b []byte, i int) int {
	n := len(b)
	// Eight bytes at a time while none of them is special: the lowest set
	// high bit of m marks the first byte that is '"', '\\', < 0x20 or
	// >= 0x80 (a borrow only moves upward, past that byte).
	for i+8 <= n {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (swarLo * '"')
		s := x ^ (swarLo * '\\')
		m := ((x - swarLo*0x20) &^ x) | ((q - swarLo) &^ q) | ((s - swarLo) &^ s) | x
		if m &= swarHi; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < n && plain[b[i]] {
		i++
	}
	return i
}

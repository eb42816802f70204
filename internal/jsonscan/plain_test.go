package jsonscan

import (
	"strconv"
	"testing"
)

// PlainEnd agrees with a byte-at-a-time scan on every position of inputs
// that put each kind of special byte at each offset of an 8-byte word.
func TestPlainEnd(t *testing.T) {
	slow := func(b []byte, i int) int {
		for i < len(b) && plain[b[i]] {
			i++
		}
		return i
	}
	for _, special := range []byte{'"', '\\', 0x00, 0x1f, 0x80, 0xc3, 0xff} {
		for at := range 20 {
			b := []byte("abcdefghijklmnopqrstu ~!")
			b[at] = special
			for i := range len(b) + 1 {
				if got, want := PlainEnd(b, i), slow(b, i); got != want {
					t.Fatalf("PlainEnd(%q, %d) = %d, want %d", b, i, got, want)
				}
			}
		}
	}
	// Long runs: each kind of special byte at offsets around the first
	// words, inside and at the tail.
	long := make([]byte, 3*256+40)
	for i := range long {
		long[i] = "abcdefghijklmnopqrstuvwxyz0123456789 -"[i%38]
	}
	for _, special := range []byte{'"', '\\', 0x00, 0x1f, 0x80, 0xc3, 0xff} {
		for _, at := range []int{0, 7, 31, 32, 33, 47, 48, 255, 256, 287, 288, 517, len(long) - 1} {
			b := append([]byte(nil), long...)
			b[at] = special
			for _, i := range []int{0, 1, 8, 17, 31, 32, at, at + 1} {
				if i > len(b) {
					continue
				}
				if got, want := PlainEnd(b, i), slow(b, i); got != want {
					t.Fatalf("special %#x at %d: PlainEnd from %d = %d, want %d", special, at, i, got, want)
				}
			}
		}
	}
	if got := PlainEnd(long, 0); got != len(long) {
		t.Fatalf("long run without special bytes: %d, want %d", got, len(long))
	}
	if got := PlainEnd([]byte("plain text only"), 0); got != 15 {
		t.Fatalf("no special byte: %d, want 15", got)
	}
}

// BenchmarkPlainEnd scans the contents of strings of each length up to
// their closing quote, as a JSON check does.
func BenchmarkPlainEnd(b *testing.B) {
	for _, n := range []int{8, 24, 300, 64 << 10} {
		s := make([]byte, n+1)
		for i := range n {
			s[i] = "abcdefghijklmnopqrstuvwxyz0123456789 -"[i%38]
		}
		s[n] = '"'
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if PlainEnd(s, 0) != n {
					b.Fatal("wrong end")
				}
			}
		})
	}
}

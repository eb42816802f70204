package route

import "encoding/binary"

// Murmur2 is Kafka's Utils.murmur2 (seed 0x9747b28c), the hash of the Java
// client's default partitioner, returned as the uint32 of Java's int. Java's
// int arithmetic wraps exactly like uint32 arithmetic and ">>>" is an unsigned
// shift, so the port needs no sign handling.
func Murmur2(b []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	h := uint32(seed) ^ uint32(len(b))
	n4 := len(b) &^ 3
	for i := 0; i < n4; i += 4 {
		k := binary.LittleEndian.Uint32(b[i : i+4])
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	switch tail := b[n4:]; len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

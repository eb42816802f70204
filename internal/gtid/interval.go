package gtid

import (
	"slices"
	"strconv"
)

// interval is the half-open range [start, end) of transaction numbers.
// Half-open so that "the next transaction extends the last interval" is the
// single comparison end == gno.
//
// An []interval is kept normal: every interval non-empty, sorted by start,
// and neither overlapping nor touching its neighbours (iv[k].end <
// iv[k+1].start), so equal sets have equal slices.
type interval struct{ start, end int64 }

// addGNO adds one transaction number to a normal slice.
func addGNO(iv []interval, gno int64) []interval {
	if n := len(iv); n == 0 || iv[n-1].end < gno {
		return append(iv, interval{gno, gno + 1})
	} else if iv[n-1].end == gno {
		iv[n-1].end++
		return iv
	}
	return addInterval(iv, gno, gno+1)
}

// addInterval adds [a, b) to a normal slice, merging what it overlaps or
// touches.
func addInterval(iv []interval, a, b int64) []interval {
	i := searchEnd(iv, a) // first interval that ends at or after a: the first candidate to merge
	j := i
	for j < len(iv) && iv[j].start <= b {
		j++
	}
	if i == j {
		return slices.Insert(iv, i, interval{a, b})
	}
	iv[i] = interval{min(a, iv[i].start), max(b, iv[j-1].end)}
	return slices.Delete(iv, i+1, j)
}

// searchEnd returns the index of the first interval whose end is >= x, or
// len(iv). A hand-written search keeps the hot path free of closures.
func searchEnd(iv []interval, x int64) int {
	lo, hi := 0, len(iv)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if iv[m].end < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// containsGNO reports whether gno is in the normal slice iv.
func containsGNO(iv []interval, gno int64) bool {
	i := searchEnd(iv, gno+1) // first interval with end > gno
	return i < len(iv) && iv[i].start <= gno
}

// normalize sorts and merges an arbitrary slice of non-empty intervals.
func normalize(iv []interval) []interval {
	slices.SortFunc(iv, func(x, y interval) int {
		switch {
		case x.start < y.start:
			return -1
		case x.start > y.start:
			return 1
		}
		return 0
	})
	out := iv[:0]
	for _, x := range iv {
		if n := len(out); n > 0 && x.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}

// containsIntervals reports whether every transaction of b is in a; both
// are normal.
func containsIntervals(a, b []interval) bool {
	i := 0
	for _, y := range b {
		// In a normal slice, y can only lie inside the first interval that
		// ends at or after y does.
		for i < len(a) && a[i].end < y.end {
			i++
		}
		if i == len(a) || a[i].start > y.start {
			return false
		}
	}
	return true
}

// subtractIntervals returns a \ b as a new normal slice; a and b are normal.
func subtractIntervals(a, b []interval) []interval {
	var out []interval
	j := 0
	for _, x := range a {
		start, end := x.start, x.end
		for j < len(b) && b[j].end <= start {
			j++
		}
		// b[j] may reach into the next x too, so j stays; k walks on.
		for k := j; k < len(b) && b[k].start < end && start < end; k++ {
			if b[k].start > start {
				out = append(out, interval{start, b[k].start})
			}
			start = max(start, b[k].end)
		}
		if start < end {
			out = append(out, interval{start, end})
		}
	}
	return out
}

// appendInterval appends ":a-b", or ":a" for a single transaction, in
// MySQL syntax.
func appendInterval(dst []byte, x interval) []byte {
	dst = append(dst, ':')
	dst = strconv.AppendInt(dst, x.start, 10)
	if x.end-1 > x.start {
		dst = append(dst, '-')
		dst = strconv.AppendInt(dst, x.end-1, 10)
	}
	return dst
}

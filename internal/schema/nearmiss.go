package schema

import "strings"

// NearMiss reports whether other is probably what someone meant when they
// wrote t, or the other way round: the same name in another letter case,
// the same table in another database, or a qualified name within a small
// edit distance (two edits, one for names of up to four characters).
// A name is not a near miss of itself.
func (t TableName) NearMiss(other TableName) bool {
	if t == other {
		return false
	}
	if strings.EqualFold(t.Table, other.Table) {
		return true
	}
	a := strings.ToLower(t.Database + "." + t.Table)
	b := strings.ToLower(other.Database + "." + other.Table)
	limit := 2
	if len(t.Table) <= 4 {
		limit = 1
	}
	return EditDistance(a, b) <= limit
}

// EditDistance is the Levenshtein distance between a and b, in bytes.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Package nearest finds the name a person most likely meant: the "did you mean" of a mistyped
// manifest field, parameter type, skill id or command-line flag. One measure of a typo for all
// of them, so each suggests alike.
package nearest

import "strings"

// maxEdits is how far a name may be from a known one and still be suggested.
const maxEdits = 2

// Name returns the name of allowed closest to k, ignoring case, if it is at most two edits
// away; else "".
func Name(k string, allowed []string) string {
	best, bestD := "", maxEdits+1
	for _, a := range allowed {
		if strings.EqualFold(a, k) {
			return a
		}
		if d := Distance(strings.ToLower(k), strings.ToLower(a)); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// Distance is the number of edits (a byte inserted, deleted or changed, or two neighbours
// swapped: the commonest typo) that make a into b. It costs len(a)*len(b): callers bound the
// lengths of what they compare.
func Distance(a, b string) int {
	before := make([]int, len(b)+1) // row i-2, for a swap
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
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(b)]
}

package search

import (
	"strings"
	"testing"
	"time"
)

// The benchmarks report a ratio against a floor measured in the same run, never an absolute
// threshold: "x-contains" is the search's ns/op divided by that of the floor, a plain
// strings.Contains scan of the same corpus, lower-cased beforehand, for the same queries.
//
//	go test -run '^$' -bench Search ./agent/search/

var benchQueries = []string{"pdf", "convert image", "weather forecast map", "github issue", "send email report"}

// containsFloor returns a scan that counts, for each query, the skills whose lower-cased text
// contains the lower-cased query: the least a search can do.
func containsFloor(c testCatalog) func() int {
	docs := make([]string, len(c))
	for i, s := range c {
		m := s.Manifest()
		docs[i] = strings.ToLower(s.ID() + " " + m.Name + " " + m.Description + " " + strings.Join(m.Tags, " "))
	}
	return func() int {
		found := 0
		for _, q := range benchQueries {
			q = strings.ToLower(q)
			for _, d := range docs {
				if strings.Contains(d, q) {
					found++
				}
			}
		}
		return found
	}
}

func BenchmarkSearch(b *testing.B) {
	c := benchCatalog(1000)
	floor := containsFloor(c)
	ix := NewIndex(c)
	cases := []struct {
		name string
		f    func() int
	}{
		// A kept Index: what a server does between reloads.
		{"index", func() int {
			n := 0
			for _, q := range benchQueries {
				n += len(ix.Search(q, 10))
			}
			return n
		}},
		// Search: indexing the 1,000 skills on every call, then the same queries.
		{"build+search", func() int {
			n := 0
			for _, q := range benchQueries {
				n += len(Search(c, q, 10))
			}
			return n
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			if tc.f() == 0 || floor() == 0 {
				b.Fatal("the queries find nothing")
			}
			b.ReportAllocs()
			b.ResetTimer()
			got := measure(b.N, tc.f)
			b.StopTimer()
			floorNs := measure(b.N, floor)
			b.ReportMetric(floorNs, "contains-ns/op")
			b.ReportMetric(got/floorNs, "x-contains")
		})
	}
}

// measure runs f n times and returns ns per call.
func measure(n int, f func() int) float64 {
	start := time.Now()
	for i := 0; i < n; i++ {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

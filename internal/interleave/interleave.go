// Package interleave measures benchmark contenders in the same rounds: one call of each per
// round, in an order that rotates, so a noisy neighbour slows them all alike. Sequential
// sub-benchmarks swing 0.8–2x on a shared machine; ratios of contenders measured together do not.
package interleave

import (
	"slices"
	"testing"
	"time"
)

// Contender is one thing measured.
type Contender struct {
	Name string
	F    func()
	// Settle, when set, runs untimed before each call (waiting for a pool to refill, say).
	Settle func()
}

// Run calls each contender b.N times, one of each per round, after two untimed warm-up calls
// each (compile, fill caches and pools), reports each one's median as "<name>-p50-ns" and returns
// the medians by name.
func Run(b *testing.B, cs ...Contender) map[string]float64 {
	b.Helper()
	for _, c := range cs {
		c.F()
		c.F()
	}
	samples := make([][]float64, len(cs))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range cs {
			k := (i + j) % len(cs)
			if cs[k].Settle != nil {
				cs[k].Settle()
			}
			start := time.Now()
			cs[k].F()
			samples[k] = append(samples[k], float64(time.Since(start).Nanoseconds()))
		}
	}
	b.StopTimer()
	p50 := map[string]float64{}
	for k, c := range cs {
		slices.Sort(samples[k])
		p50[c.Name] = samples[k][len(samples[k])/2]
		b.ReportMetric(p50[c.Name], c.Name+"-p50-ns")
	}
	return p50
}

// Medians reports the median of each contender's own samples (a time the guest measured, say)
// as "<name>-<unit>" and returns them by name. It sorts the samples.
func Medians(b *testing.B, unit string, samples map[string][]float64) map[string]float64 {
	b.Helper()
	p50 := map[string]float64{}
	for name, xs := range samples {
		slices.Sort(xs)
		p50[name] = xs[len(xs)/2]
		b.ReportMetric(p50[name], name+"-"+unit)
	}
	return p50
}

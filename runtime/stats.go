package runtime

import (
	"sort"
	"sync"

	"github.com/skillbox-dev/skillbox/run"
)

// RunCount is how many runs of one skill, through one face, ended one way.
type RunCount struct {
	Skill string // "" for requests naming no known skill
	Face  run.Face
	// Outcome is "success" or the error kind.
	Outcome string
	Count   int64
}

// DurationBuckets are the upper bounds, in seconds, of the run duration histogram.
var DurationBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Stats are the runtime's counters since New, for metrics. Every run of every face is in them.
type Stats struct {
	// Runs counts every request by skill, face and outcome, refused ones included (busy,
	// invalid_args, not_found).
	Runs []RunCount
	// DurationCounts[i] counts admitted runs that took at most DurationBuckets[i] seconds (not
	// cumulative); DurationCount and DurationSum are their number and total seconds.
	DurationCounts []int64
	DurationCount  int64
	DurationSum    float64
	// CompileHits counts runs that found their module compiled in memory; Compiles counts
	// compilations (each of which may itself be served by the on-disk cache); Evictions counts
	// compiled modules dropped to make room.
	CompileHits, Compiles, Evictions int64
	// ChildCompiles counts compilations made in a child process (see MaybeCompileChild).
	ChildCompiles int64
	// WarmModules is how many compiled modules are kept now.
	WarmModules int
	// WarmHits counts runs that took an instance made ahead of them (Config.WarmInstances);
	// WarmMade counts those made, and WarmRefillNs is the time spent making them, in the
	// background.
	WarmHits, WarmMade, WarmRefillNs int64
	// Interpreters is how many script interpreters are kept compiled (one per language and memory
	// limit in use); InterpreterCompiles counts their compilations, InterpreterEvictions those
	// dropped to make room.
	Interpreters                              int
	InterpreterCompiles, InterpreterEvictions int64
	// Checks counts skills checked since New (see StatusUnchecked), by their first run or the
	// background check; ModuleReads counts the modules those checks read from disk (the others
	// were known by their files' identity and hash).
	Checks, ModuleReads int64
	Admission           AdmissionStats
}

type runKey struct {
	skill   string
	face    run.Face
	outcome string
}

// counters are the run counters behind Stats.
type counters struct {
	mu     sync.Mutex
	runs   map[runKey]int64
	counts []int64
	n      int64
	sum    float64
}

func newCounters() *counters {
	return &counters{runs: map[runKey]int64{}, counts: make([]int64, len(DurationBuckets))}
}

// observe counts one request; admitted ones have their duration counted too.
func (c *counters) observe(skill string, face run.Face, res *run.Result, admitted bool) {
	outcome := "success"
	if res.Error != nil {
		outcome = string(res.Error.Kind)
	}
	sec := res.DurationMs / 1000
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs[runKey{skill, face, outcome}]++
	if !admitted {
		return
	}
	for i, b := range DurationBuckets {
		if sec <= b {
			c.counts[i]++
			break
		}
	}
	c.n++
	c.sum += sec
}

func (c *counters) snapshot(s *Stats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, n := range c.runs {
		s.Runs = append(s.Runs, RunCount{Skill: k.skill, Face: k.face, Outcome: k.outcome, Count: n})
	}
	sort.Slice(s.Runs, func(i, j int) bool {
		a, b := s.Runs[i], s.Runs[j]
		if a.Skill != b.Skill {
			return a.Skill < b.Skill
		}
		if a.Face != b.Face {
			return a.Face < b.Face
		}
		return a.Outcome < b.Outcome
	})
	s.DurationCounts = append([]int64(nil), c.counts...)
	s.DurationCount, s.DurationSum = c.n, c.sum
}

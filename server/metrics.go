package server

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/runtime"
)

// metrics are Prometheus counters kept by hand: a few counters do not need a client library.
type metrics struct {
	inFlight atomic.Int64
	rejected atomic.Int64

	mu      sync.Mutex
	runs    map[[2]string]int64 // skill, outcome
	buckets []float64           // seconds
	counts  []int64             // per bucket, cumulative at render time
	sum     float64
	total   int64
}

func newMetrics() *metrics {
	b := []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	return &metrics{runs: map[[2]string]int64{}, buckets: b, counts: make([]int64, len(b))}
}

func (m *metrics) observe(r *runtime.Result) {
	outcome := "success"
	if r.Error != nil {
		outcome = string(r.Error.Kind)
	}
	sec := r.DurationMs / 1000
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[[2]string{r.Skill, outcome}]++
	for i, b := range m.buckets {
		if sec <= b {
			m.counts[i]++
		}
	}
	m.sum += sec
	m.total++
}

func (s *Server) metricsHandler(c echo.Context) error {
	m := s.metrics
	var b strings.Builder
	m.mu.Lock()
	fmt.Fprintln(&b, "# HELP skillbox_runs_total Runs by skill and outcome (success or the error kind).")
	fmt.Fprintln(&b, "# TYPE skillbox_runs_total counter")
	keys := make([][2]string, 0, len(m.runs))
	for k := range m.runs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		fmt.Fprintf(&b, "skillbox_runs_total{skill=%q,outcome=%q} %d\n", k[0], k[1], m.runs[k])
	}
	fmt.Fprintln(&b, "# HELP skillbox_run_duration_seconds Run duration, from the runtime's result.")
	fmt.Fprintln(&b, "# TYPE skillbox_run_duration_seconds histogram")
	for i, le := range m.buckets {
		fmt.Fprintf(&b, "skillbox_run_duration_seconds_bucket{le=\"%g\"} %d\n", le, m.counts[i])
	}
	fmt.Fprintf(&b, "skillbox_run_duration_seconds_bucket{le=\"+Inf\"} %d\n", m.total)
	fmt.Fprintf(&b, "skillbox_run_duration_seconds_sum %g\nskillbox_run_duration_seconds_count %d\n", m.sum, m.total)
	m.mu.Unlock()
	st := s.rt.Stats()
	fmt.Fprintf(&b, "# HELP skillbox_runs_in_flight Runs executing now.\n# TYPE skillbox_runs_in_flight gauge\nskillbox_runs_in_flight %d\n", m.inFlight.Load())
	fmt.Fprintf(&b, "# HELP skillbox_runs_rejected_total Runs refused with 429 (queue full).\n# TYPE skillbox_runs_rejected_total counter\nskillbox_runs_rejected_total %d\n", m.rejected.Load())
	fmt.Fprintf(&b, "# HELP skillbox_compile_cache_hits_total Runs whose module was already compiled.\n# TYPE skillbox_compile_cache_hits_total counter\nskillbox_compile_cache_hits_total %d\n", st.CompileHits)
	fmt.Fprintf(&b, "# HELP skillbox_compiles_total Module compilations (each may be served by the on-disk cache).\n# TYPE skillbox_compiles_total counter\nskillbox_compiles_total %d\n", st.Compiles)
	fmt.Fprintf(&b, "# HELP skillbox_skills Loaded skills by status.\n# TYPE skillbox_skills gauge\n")
	byStatus := map[string]int{}
	for _, sk := range s.rt.Skills() {
		byStatus[string(sk.Status())]++
	}
	for _, st := range []string{"active", "error"} {
		fmt.Fprintf(&b, "skillbox_skills{status=%q} %d\n", st, byStatus[st])
	}
	return c.Blob(http.StatusOK, "text/plain; version=0.0.4; charset=utf-8", []byte(b.String()))
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is ready once the registry is loaded (always, after New) and reports what is loaded.
func (s *Server) readyz(c echo.Context) error {
	n, broken := 0, 0
	for _, sk := range s.rt.Skills() {
		n++
		if sk.Status() != runtime.StatusActive {
			broken++
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"status": "ready", "skills": n, "broken": broken, "version": s.version})
}

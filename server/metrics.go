package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// metricsHandler renders the runtime's counters (every run of every face) in Prometheus' text
// format: a few counters do not need a client library.
func (s *view) metricsHandler(c echo.Context) error {
	st := s.rt.Stats()
	var b strings.Builder
	fmt.Fprintln(&b, "# HELP skillbox_runs_total Runs by skill, face and outcome (success or the error kind); refused requests included.")
	fmt.Fprintln(&b, "# TYPE skillbox_runs_total counter")
	var rejected int64
	for _, r := range st.Runs {
		fmt.Fprintf(&b, "skillbox_runs_total{skill=%q,face=%q,outcome=%q} %d\n", r.Skill, r.Face, r.Outcome, r.Count)
		if r.Outcome == string(run.KindBusy) {
			rejected += r.Count
		}
	}
	fmt.Fprintln(&b, "# HELP skillbox_run_duration_seconds Duration of admitted runs, from the runtime's result.")
	fmt.Fprintln(&b, "# TYPE skillbox_run_duration_seconds histogram")
	var cum int64
	for i, le := range runtime.DurationBuckets {
		cum += st.DurationCounts[i]
		fmt.Fprintf(&b, "skillbox_run_duration_seconds_bucket{le=\"%g\"} %d\n", le, cum)
	}
	fmt.Fprintf(&b, "skillbox_run_duration_seconds_bucket{le=\"+Inf\"} %d\n", st.DurationCount)
	fmt.Fprintf(&b, "skillbox_run_duration_seconds_sum %g\nskillbox_run_duration_seconds_count %d\n", st.DurationSum, st.DurationCount)
	a := st.Admission
	gauge := func(name, help string, v any) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %v\n", name, help, name, name, v)
	}
	counter := func(name, help string, v int64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	gauge("skillbox_runs_in_flight", "Runs executing now.", a.Running)
	gauge("skillbox_runs_queued", "Runs waiting for admission.", a.Queued)
	counter("skillbox_runs_rejected_total", "Runs refused busy (queue full, waited too long, closing).", rejected)
	gauge("skillbox_memory_budget_bytes", "The admission control's memory budget.", a.MemoryBudget)
	gauge("skillbox_memory_charged_bytes", "What admitted runs, compilations and warm modules are charged now.", a.MemoryInUse)
	gauge("skillbox_compiles_in_flight", "Modules compiling now.", a.Compiling)
	gauge("skillbox_warm_modules", "Compiled modules kept in memory.", st.WarmModules)
	counter("skillbox_compile_cache_hits_total", "Runs whose module was already compiled.", st.CompileHits)
	counter("skillbox_compiles_total", "Module compilations (each may be served by the on-disk cache).", st.Compiles)
	counter("skillbox_module_evictions_total", "Compiled modules dropped to make room in the memory budget.", st.Evictions)
	gauge("skillbox_interpreters", "Script interpreters kept compiled (one per language and memory limit in use).", st.Interpreters)
	counter("skillbox_interpreter_compiles_total", "Script interpreter compilations.", st.InterpreterCompiles)
	fmt.Fprintf(&b, "# HELP skillbox_skills Loaded skills by status.\n# TYPE skillbox_skills gauge\n")
	byStatus := map[string]int{}
	for _, sk := range s.rt.Skills() {
		byStatus[string(sk.Status())]++
	}
	for _, st := range []string{"active", "unchecked", "error"} {
		fmt.Fprintf(&b, "skillbox_skills{status=%q} %d\n", st, byStatus[st])
	}
	if s.t == s.def {
		// The process is the operator's: a tenant's keys read their tenant's counters only.
		writeProcessMetrics(&b)
		writeStoreMetrics(&b, s.rt.Health(), gauge, counter)
	}
	return c.Blob(http.StatusOK, "text/plain; version=0.0.4; charset=utf-8", []byte(b.String()))
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers whether this replica takes runs (200) or not (503), as the runtime decides
// (runtime.Health), with each dependency's state: a load balancer routes by the status code,
// an operator reads the body.
func (s *Server) readyz(c echo.Context) error {
	n, broken := 0, 0
	for _, sk := range s.def.rt.Skills() {
		n++
		if sk.Status() == catalog.StatusError {
			broken++
		}
	}
	h := s.def.rt.Health()
	body := map[string]any{"status": "ready", "skills": n, "broken": broken, "version": s.version,
		"admission": h.Admission}
	if h.Records != nil {
		rec := map[string]any{"up": h.Records.Up, "queued": h.Records.Queued, "spooled": h.Records.Spooled,
			"spool_bytes": h.Records.SpoolBytes, "max_spool_bytes": h.Records.MaxSpoolBytes, "dropped": h.Records.Dropped}
		if !h.Records.OldestSpooled.IsZero() {
			rec["oldest_spooled"] = h.Records.OldestSpooled
		}
		body["records"] = rec // the store's error stays in the log: it can name hosts
	}
	if h.Versions != nil {
		body["versions"] = h.Versions
	}
	status := http.StatusOK
	if !h.Ready {
		body["status"], body["reason"] = "not_ready", h.Reason
		status = http.StatusServiceUnavailable
	}
	return c.JSON(status, body)
}

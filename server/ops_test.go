package server

import (
	"log/slog"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/syncbuf"
)

var sampleLine = regexp.MustCompile(`^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+]+$`)

func TestMetrics(t *testing.T) {
	t.Parallel()
	ts, _ := newTestServer(t, Options{})
	for i := 0; i < 2; i++ {
		if res := runResult(t, post(t, ts.URL+"/v1/skills/word-count/runs", `{"args":{"text":"a b"}}`)); !res.Success {
			t.Fatalf("%+v", res)
		}
	}
	wantError(t, post(t, ts.URL+"/v1/skills/word-count/runs", `{"args":{"text":1}}`), 422, "invalid_args")
	wantError(t, post(t, ts.URL+"/v1/skills/nope/runs", `{}`), 404, "not_found")
	runResult(t, post(t, ts.URL+"/v1/skills/http-get/runs", `{"args":{"url":"https://denied.example.com/"}}`))

	r := get(t, ts.URL+"/metrics")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%s %q", r, r.header.Get("Content-Type"))
	}
	text := string(r.body)
	typed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(rest)
			typed[f[0]] = f[1]
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		if !sampleLine.MatchString(line) {
			t.Errorf("not a valid sample line: %q", line)
		}
	}
	for name, typ := range map[string]string{"skillbox_runs_total": "counter", "skillbox_run_duration_seconds": "histogram", "skillbox_runs_in_flight": "gauge",
		"skillbox_runs_rejected_total": "counter", "skillbox_compile_cache_hits_total": "counter", "skillbox_skills": "gauge",
		"go_goroutines": "gauge", "go_heap_objects_bytes": "gauge", "go_gc_cycles_total": "counter", "process_max_fds": "gauge"} {
		if typed[name] != typ {
			t.Errorf("%s: TYPE %q, want %s", name, typed[name], typ)
		}
	}
	tests := []struct {
		sample string
		want   float64 // -1: must be absent; -2: must be > 0
	}{
		{`skillbox_runs_total{skill="word-count",face="http",outcome="success"}`, 2},
		{`skillbox_runs_total{skill="word-count",face="http",outcome="invalid_args"}`, 1}, // a 422 is counted, not timed
		{`skillbox_runs_total{skill="nope",face="http",outcome="not_found"}`, -1},         // a client's id is never a label
		{`skillbox_runs_total{skill="",face="http",outcome="not_found"}`, 1},
		{`skillbox_runs_total{skill="http-get",face="http",outcome="permission_denied"}`, 1},
		{`skillbox_run_duration_seconds_count`, 3},
		{`skillbox_run_duration_seconds_bucket{le="+Inf"}`, 3},
		{`skillbox_run_duration_seconds_sum`, -2},
		{`skillbox_runs_in_flight`, 0},
		{`skillbox_runs_rejected_total`, 0},
		{`skillbox_compile_cache_hits_total`, -2}, // the second word-count run found its module compiled
		{`skillbox_skills{status="error"}`, 0},
		{`go_goroutines`, -2},
		{`go_heap_objects_bytes`, -2},
		{`go_gc_heap_goal_bytes`, -2},
		{`go_memory_total_bytes`, -2},
		{`process_max_fds`, -2},
	}
	if goruntime.GOOS == "linux" {
		tests = append(tests, struct {
			sample string
			want   float64
		}{`process_open_fds`, -2})
	}
	// The skills run are active; the others are unchecked, or active when the index left by an
	// earlier process over the same directory knew them.
	active, _ := metricValue(text, `skillbox_skills{status="active"}`)
	unchecked, _ := metricValue(text, `skillbox_skills{status="unchecked"}`)
	if n := float64(len(bundledIDs(t))); active+unchecked != n || active < 2 {
		t.Errorf("skills: %v active, %v unchecked; want %v in all (every bundled skill), at least the 2 that ran active", active, unchecked, n)
	}
	for _, tc := range tests {
		v, ok := metricValue(text, tc.sample)
		switch {
		case tc.want == -1 && ok:
			t.Errorf("%s is present (%v)", tc.sample, v)
		case tc.want == -2 && !(ok && v > 0):
			t.Errorf("%s = %v, %v; want > 0", tc.sample, v, ok)
		case tc.want >= 0 && (!ok || v != tc.want):
			t.Errorf("%s = %v, %v; want %v", tc.sample, v, ok, tc.want)
		}
	}
	// Histogram buckets: every bound listed in increasing order, counts never decreasing.
	prevLE, prevCount := -1.0, -1.0
	for _, m := range regexp.MustCompile(`(?m)^skillbox_run_duration_seconds_bucket\{le="([^"]+)"\} (\d+)$`).FindAllStringSubmatch(text, -1) {
		le, err := strconv.ParseFloat(m[1], 64)
		if m[1] == "+Inf" {
			le, err = 1e308, nil
		}
		c, _ := strconv.ParseFloat(m[2], 64)
		if err != nil || le <= prevLE || c < prevCount {
			t.Errorf("bucket le=%s count %s after le=%v count %v", m[1], m[2], prevLE, prevCount)
		}
		prevLE, prevCount = le, c
	}
	if prevLE != 1e308 {
		t.Errorf("no +Inf bucket")
	}
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	env, _ := docsEnv(t)
	r := get(t, env.ts.URL+"/healthz")
	if r.status != 200 || r.object(t)["status"] != "ok" {
		t.Errorf("healthz %s", r)
	}
	r = get(t, env.ts.URL+"/readyz")
	m := r.object(t)
	// docs, guide, broken, and every bundled skill; one broken
	if r.status != 200 || m["status"] != "ready" || m["skills"] != float64(3+len(bundledIDs(t))) || m["broken"] != float64(1) || m["version"] == "" {
		t.Errorf("readyz %s", r)
	}
}

func TestRequestIDs(t *testing.T) {
	t.Parallel()
	env := authEnv(t, keysOptions())
	key := []string{"X-API-Key", roleKeys[access.RoleViewer]}
	tests := []struct {
		name, method, path string
		header             []string
		status             int
	}{
		{"ok", "GET", "/v1/skills", key, 200},
		{"not found", "GET", "/v1/skills/nope", key, 404},
		{"unauthorized", "GET", "/v1/skills", nil, 401},
		{"forbidden", "POST", "/v1/reload", key, 403},
		{"no route", "GET", "/nowhere", key, 404},
		{"bad method", "PATCH", "/v1/skills", key, 0},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		r := send(t, tc.method, env.ts.URL+tc.path, nil, tc.header...)
		id := r.header.Get("X-Request-Id")
		if (tc.status != 0 && r.status != tc.status) || id == "" || seen[id] {
			t.Errorf("%s: %s, request id %q", tc.name, r, id)
		}
		seen[id] = true
	}
	// A caller's own request id is kept.
	r := get(t, env.ts.URL+"/v1/skills", append(key, "X-Request-Id", "trace-abc-123")...)
	if got := r.header.Get("X-Request-Id"); got != "trace-abc-123" {
		t.Errorf("request id %q, want the caller's", got)
	}
}

// The access log has a line per request, with its status, request id and the key's name, never
// the key itself.
func TestAccessLogNeverShowsKeys(t *testing.T) {
	t.Parallel()
	var buf syncbuf.Buffer
	opts := keysOptions()
	opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	env := authEnv(t, opts)
	u := env.ts.URL
	wrong := "wrong-key-but-secret-0123456789"
	requests := []struct {
		send   func() reply
		status int
		key    string // the key name logged
	}{
		{func() reply { return get(t, u+"/v1/skills", "Authorization", "Bearer "+roleKeys[access.RoleViewer]) }, 200, "viewer-client"},
		{func() reply {
			return post(t, u+"/v1/skills/hello/runs", "{}", "X-API-Key", roleKeys[access.RoleRunner])
		}, 200, "runner-client"},
		{func() reply { return post(t, u+"/v1/reload", "", "X-API-Key", roleKeys[access.RoleAuthor]) }, 403, "author-client"},
		{func() reply { return get(t, u+"/v1/skills", "Authorization", "Bearer "+wrong) }, 401, ""},
		{func() reply {
			return get(t, u+"/v1/skills/nope?key="+roleKeys[access.RoleAdmin], "X-API-Key", roleKeys[access.RoleAdmin])
		}, 404, "admin-client"},
	}
	for i, rq := range requests {
		if r := rq.send(); r.status != rq.status {
			t.Errorf("request %d: %s", i, r)
		}
	}
	var lines []string
	if !waitFor(hangGuard, func() bool {
		lines = nil
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.Contains(l, "msg=request") {
				lines = append(lines, l)
			}
		}
		return len(lines) >= len(requests)
	}) {
		t.Fatalf("%d access log lines for %d requests:\n%s", len(lines), len(requests), buf.String())
	}
	log := buf.String()
	for _, k := range append([]string{wrong}, roleKeys[access.RoleViewer], roleKeys[access.RoleRunner], roleKeys[access.RoleAuthor], roleKeys[access.RoleAdmin]) {
		if strings.Contains(log, k) || strings.Contains(log, k[:16]) {
			t.Errorf("the log shows a key:\n%s", log)
		}
	}
	for i, rq := range requests {
		found := false
		for _, l := range lines {
			if strings.Contains(l, "status="+strconv.Itoa(rq.status)+" ") && strings.Contains(l, "key="+rq.key) &&
				strings.Contains(l, "request_id=") && !strings.Contains(l, "request_id= ") {
				found = true
			}
		}
		if !found {
			t.Errorf("request %d (status %d, key %q) has no line:\n%s", i, rq.status, rq.key, strings.Join(lines, "\n"))
		}
	}
}

// A known path with a method it does not take is 405 with Allow, not 404: a client that sends
// PATCH or GET /v1/reload should learn that the path exists.
func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	tests := []struct{ method, path, allow string }{
		{"PATCH", "/v1/skills", "GET"},
		{"GET", "/v1/reload", "POST"},
		{"DELETE", "/v1/runs", "POST"},
		{"POST", "/healthz", "GET"},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			r := send(t, tc.method, env.ts.URL+tc.path, nil)
			if r.status == 404 {

			}
			wantError(t, r, 405, "method_not_allowed")
			if !strings.Contains(r.header.Get("Allow"), tc.allow) {
				t.Errorf("Allow %q", r.header.Get("Allow"))
			}
		})
	}
}

package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/runtime"
)

// userApp is a user's own echo app, with echo's default HTTPErrorHandler and a route of its own,
// with the server mounted under /skills.
func userApp(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	fixture(t, dir, "hello", manifestJSON("hello", ""), "hello", nil)
	fixture(t, dir, "echo", manifestJSON("echo", `"parameters":{"type":"object","properties":{"n":{"type":"integer"}}}`), "echo", nil)
	fixture(t, dir, "loop", manifestJSON("loop", `"limits":{"timeoutMs":100}`), "loop", nil)
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, MaxArgsBytes: 128, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	srv, err := New(rt, opts)
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.GET("/", func(c echo.Context) error { return c.String(200, "the user's home") })
	srv.Mount(e.Group("/skills"))
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	return ts
}

func TestMountedInAUserApp(t *testing.T) {
	t.Parallel()
	opts := Options{}
	ts := userApp(t, opts)
	u := ts.URL
	tests := []struct {
		name, method, path, body string // given
		status                   int    // expect
		code                     string // JSON error code when not 2xx
		contains                 string
	}{
		{"list", "GET", "/skills/v1/skills", "", 200, "", `"id":"hello"`},
		{"detail", "GET", "/skills/v1/skills/echo", "", 200, "", `"parameters"`},
		{"run", "POST", "/skills/v1/skills/echo/runs", `{"args":{"n":2}}`, 200, "", `"result":{"n":2}`},
		{"run named in the body", "POST", "/skills/v1/runs", `{"skill":"hello"}`, 200, "", `"greeting":"hi"`},
		{"metrics", "GET", "/skills/metrics", "", 200, "", "skillbox_runs_total"},
		{"healthz", "GET", "/skills/healthz", "", 200, "", `"ok"`},
		{"openapi", "GET", "/skills/openapi.json", "", 200, "", `"openapi"`},
		{"unknown skill", "GET", "/skills/v1/skills/nope", "", 404, "not_found", ""},
		{"malformed run", "POST", "/skills/v1/skills/echo/runs", `{`, 400, "bad_request", ""},
		{"invalid args", "POST", "/skills/v1/skills/echo/runs", `{"args":{"n":"x"}}`, 422, "invalid_args", ""},
		{"too large", "POST", "/skills/v1/skills/echo/runs", `{"args":{"s":"` + strings.Repeat("a", 200) + `"}}`, 422, "invalid_args", "runs.maxArgsBytes"},
		{"unsupported upload", "POST", "/skills/v1/skills", `{}`, 415, "unsupported_media_type", ""},
		{"bad tools format", "GET", "/skills/v1/tools?format=x", "", 400, "bad_request", ""},
		{"the user's own route", "GET", "/", "", 200, "", "the user's home"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := send(t, tc.method, u+tc.path, strings.NewReader(tc.body), "Content-Type", "application/json")
			if tc.status < 300 {
				if r.status != tc.status || !strings.Contains(string(r.body), tc.contains) {
					t.Errorf("%s", r)
				}
				return
			}
			wantError(t, r, tc.status, tc.code)
		})
	}
	// The routes are only under the prefix.
	if r := get(t, u+"/v1/skills"); r.status != 404 {
		t.Errorf("unprefixed route answered: %s", r)
	}
	// SSE works through the user's app.
	resp := stream(t, context.Background(), u+"/skills/v1/skills/hello/runs", `{}`)
	defer resp.Body.Close()
	var names []string
	readSSE(t, resp.Body, func(e sseEvent) bool { names = append(names, e.name+":"+e.ev.Status); return true })
	if resp.Header.Get("Content-Type") != "text/event-stream" || strings.Join(names, ",") != "status:started,status:running,result:" {
		t.Errorf("SSE through the mount: %v", names)
	}
}

// Keys guard only the group: the user's own routes are theirs.
func TestMountedWithKeys(t *testing.T) {
	t.Parallel()
	ts := userApp(t, keysOptions())
	if r := get(t, ts.URL+"/"); r.status != 200 {
		t.Errorf("the user's route asks for a key: %s", r)
	}
	r := get(t, ts.URL+"/skills/v1/skills")
	wantError(t, r, 401, "unauthorized")
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("no WWW-Authenticate")
	}
	wantError(t, post(t, ts.URL+"/skills/v1/reload", "", "X-API-Key", roleKeys[access.RoleRunner]), 403, "forbidden")
	if r := post(t, ts.URL+"/skills/v1/reload", "", "X-API-Key", roleKeys[access.RoleAdmin]); r.status != 200 {
		t.Errorf("admin reload: %s", r)
	}
}

// Mounted, a known path with the wrong method is 405, and an unknown path under the prefix 404:
// answered by the user's app, whose error handler owns what matches no route.
func TestMountedUnmatchedRequestsAreTheAppsToAnswer(t *testing.T) {
	t.Parallel()
	ts := userApp(t, Options{})
	if r := send(t, "PATCH", ts.URL+"/skills/v1/skills", nil); r.status != http.StatusMethodNotAllowed {
		t.Errorf("wrong method: %s", r)
	}
	if r := get(t, ts.URL+"/skills/v1/nothing"); r.status != http.StatusNotFound {
		t.Errorf("no route: %s", r)
	}
}

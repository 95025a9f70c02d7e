package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/console"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/server"
)

// TestMain lets a runtime of these tests compile in a child process, as every runtime's test
// binary must (runtime.MaybeCompileChild); these tests' one skill has no code to compile.
func TestMain(m *testing.M) {
	runtime.MaybeCompileChild()
	os.Exit(m.Run())
}

const adminKey = "console-admin-key-0123456789"

// serve starts a server over a runtime with one instructions skill, with the console, with
// keys or without.
func serve(t *testing.T, keys []server.APIKey, c http.Handler) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	skill := filepath.Join(dir, "guide")
	if err := os.MkdirAll(skill, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: guide\ndescription: How to do it. <script>window.x=1</script>\n---\n# Guide\n\nText.\n"
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir},
		Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testcache.Dir()})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	s, err := server.New(rt, server.Options{Keys: keys, Console: c})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

type answer struct {
	code int
	hdr  http.Header
	body string
}

func do(t *testing.T, method, url string, hdr ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// TestServedWithKeys: with keys, the console's files need none (a page carries no secret),
// and the API it calls still does.
func TestServedWithKeys(t *testing.T) {
	t.Parallel()
	ts := serve(t, []server.APIKey{{Name: "ops", Key: adminKey, Role: access.RoleAdmin}}, console.Handler())
	for path, ctype := range map[string]string{"/console/": "text/html", "/console/app.js": "text/javascript", "/console/app.css": "text/css"} {
		a := do(t, "GET", ts.URL+path)
		if a.code != 200 || !strings.HasPrefix(a.hdr.Get("Content-Type"), ctype) || a.hdr.Get("Content-Security-Policy") != console.CSP {
			t.Errorf("GET %s: %d %q, CSP %q", path, a.code, a.hdr.Get("Content-Type"), a.hdr.Get("Content-Security-Policy"))
		}
		if a.hdr.Get("X-Request-Id") == "" {
			t.Errorf("GET %s: no X-Request-Id: not behind the server's common middleware", path)
		}
	}
	if a := do(t, "GET", ts.URL+"/console"); a.code != http.StatusMovedPermanently || a.hdr.Get("Location") != "console/" {
		t.Errorf("GET /console: %d Location %q, want 301 to console/", a.code, a.hdr.Get("Location"))
	}
	if a := do(t, "GET", ts.URL+"/console/nope.js"); a.code != 404 {
		t.Errorf("GET /console/nope.js: %d", a.code)
	}
	if a := do(t, "POST", ts.URL+"/console/", "Content-Type", "application/json"); a.code != http.StatusMethodNotAllowed {
		t.Errorf("POST /console/: %d, want 405", a.code)
	}
	if a := do(t, "GET", ts.URL+"/v1/skills"); a.code != 401 {
		t.Errorf("GET /v1/skills without a key: %d, want 401", a.code)
	}
	a := do(t, "GET", ts.URL+"/v1/skills", "Authorization", "Bearer "+adminKey)
	if a.code != 200 || !strings.Contains(a.body, `"id":"guide"`) {
		t.Errorf("GET /v1/skills with the key: %d %s", a.code, a.body)
	}
	// With keys, any Host is served: the keys protect the API, and the files are public.
	if a := do(t, "GET", ts.URL+"/console/", "Host", "console.example"); a.code != 200 {
		t.Errorf("GET /console/ by another name, with keys: %d", a.code)
	}
}

// TestKeylessServesLoopbackOnly: without keys, the console answers loopback names alone, as
// the API does (DNS rebinding), and a cross-site POST is refused.
func TestKeylessServesLoopbackOnly(t *testing.T) {
	t.Parallel()
	ts := serve(t, nil, console.Handler())
	if a := do(t, "GET", ts.URL+"/console/"); a.code != 200 {
		t.Errorf("GET /console/ on loopback: %d", a.code)
	}
	if a := do(t, "GET", ts.URL+"/console/app.js", "Host", "evil.example"); a.code != http.StatusMisdirectedRequest {
		t.Errorf("GET /console/app.js by a rebound name: %d, want 421", a.code)
	}
	if a := do(t, "POST", ts.URL+"/console/", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); a.code != http.StatusForbidden && a.code != http.StatusMethodNotAllowed {
		t.Errorf("cross-site POST /console/: %d", a.code)
	}
}

// TestNoConsole: a server without Options.Console has no /console.
func TestNoConsole(t *testing.T) {
	t.Parallel()
	ts := serve(t, nil, nil)
	for _, p := range []string{"/console", "/console/", "/console/app.js"} {
		if a := do(t, "GET", ts.URL+p); a.code != 404 {
			t.Errorf("GET %s without a console: %d", p, a.code)
		}
	}
}

// TestUnderAPrefix: mounted in another app under a prefix, the console is at prefix/console/.
func TestUnderAPrefix(t *testing.T) {
	t.Parallel()
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{t.TempDir()},
		Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testcache.Dir()})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	s, err := server.New(rt, server.Options{Console: console.Handler()})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	s.Mount(e.Group("/skillbox"))
	ts := httptest.NewServer(e)
	t.Cleanup(ts.Close)
	if a := do(t, "GET", ts.URL+"/skillbox/console/app.js"); a.code != 200 || !strings.HasPrefix(a.hdr.Get("Content-Type"), "text/javascript") {
		t.Errorf("GET /skillbox/console/app.js: %d %q", a.code, a.hdr.Get("Content-Type"))
	}
	if a := do(t, "GET", ts.URL+"/skillbox/console"); a.code != http.StatusMovedPermanently || a.hdr.Get("Location") != "console/" {
		t.Errorf("GET /skillbox/console: %d %q", a.code, a.hdr.Get("Location"))
	}
}

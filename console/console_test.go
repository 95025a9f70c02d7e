package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// get asks h for path with method and returns the answer.
func get(t *testing.T, h http.Handler, method, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "http://localhost/", nil)
	r.URL.Path = path // as given, not cleaned: what a router hands the handler
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestHandlerHeaders: every answer, a 404 and a 405 included, carries the CSP and the other
// headers that keep a page from being framed, sniffed or leaking its address.
func TestHandlerHeaders(t *testing.T) {
	t.Parallel()
	h := Handler()
	want := map[string]string{
		"Content-Security-Policy": CSP,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/app.js"}, {"HEAD", "/app.css"}, {"GET", "/nope.js"}, {"POST", "/"},
	} {
		w := get(t, h, c.method, c.path)
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s %s: %s = %q, want %q", c.method, c.path, k, got, v)
			}
		}
		if w.Header().Get("Set-Cookie") != "" {
			t.Errorf("%s %s sets a cookie", c.method, c.path)
		}
	}
}

// TestCSPIsStrict: the policy names no other origin, allows nothing inline and no eval.
func TestCSPIsStrict(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(CSP, bad) {
			t.Errorf("CSP allows %s: %s", bad, CSP)
		}
	}
	for _, need := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
		"base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(CSP, need) {
			t.Errorf("CSP lacks %s: %s", need, CSP)
		}
	}
}

// TestContentTypes: each asset with its own type and charset, no-cache with an ETag, and a
// revalidation with that ETag answered 304 without the body.
func TestContentTypes(t *testing.T) {
	t.Parallel()
	h := Handler()
	for path, ctype := range map[string]string{
		"/":           "text/html; charset=utf-8",
		"/index.html": "text/html; charset=utf-8",
		"/app.js":     "text/javascript; charset=utf-8",
		"/app.css":    "text/css; charset=utf-8",
	} {
		w := get(t, h, "GET", path)
		if w.Code != 200 || w.Header().Get("Content-Type") != ctype || w.Body.Len() == 0 {
			t.Errorf("GET %s: %d %q, %d bytes; want 200 %q", path, w.Code, w.Header().Get("Content-Type"), w.Body.Len(), ctype)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache", path, cc)
		}
		etag := w.Header().Get("ETag")
		if etag == "" {
			t.Errorf("GET %s: no ETag", path)
			continue
		}
		if w := get(t, h, "GET", path, "If-None-Match", etag); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
			t.Errorf("GET %s with its ETag: %d, %d bytes; want 304 and none", path, w.Code, w.Body.Len())
		}
	}
	if w := get(t, h, "HEAD", "/app.js"); w.Code != 200 || w.Body.Len() != 0 {
		t.Errorf("HEAD /app.js: %d, %d bytes", w.Code, w.Body.Len())
	}
	if w := get(t, h, "POST", "/app.js"); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /app.js: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

// TestIndexLoadsOnlyItsOwnFiles: the page names its script and style by relative URLs (so it
// works under any prefix) and has no inline script, style or handler the CSP would refuse.
func TestIndexLoadsOnlyItsOwnFiles(t *testing.T) {
	t.Parallel()
	body := get(t, Handler(), "GET", "/").Body.String()
	for _, want := range []string{`<script src="app.js" defer></script>`, `<link rel="stylesheet" href="app.css">`, `<nav aria-label="Main"`, `<main`, `<header`} {
		if !strings.Contains(body, want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	for _, bad := range []string{"<style", " style=", " onclick=", " onload=", "http://", "https://", "<script>"} {
		if strings.Contains(body, bad) {
			t.Errorf("index.html has %q, which the CSP refuses or which leaves the origin", bad)
		}
	}
}

// TestUnknownAndTraversal: only the embedded assets answer; a path that leads elsewhere, in
// any spelling, is 404 and shows nothing of the source tree.
func TestUnknownAndTraversal(t *testing.T) {
	t.Parallel()
	h := Handler()
	for _, p := range []string{
		"/nope.js", "/app.js/", "/app.js/x", "/APP.JS", "/dist/app.js", "/src/main.ts", "/console.go",
		"/../console.go", "/../../go.mod", "/%2e%2e/console.go", "/..%2fconsole.go", "//app.js", "/./app.js",
		"/index.html/..", "/app.js%00", "/.", "/..", "/build/build.go", "/generate/main.go",
	} {
		w := get(t, h, "GET", p)
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %q: %d, want 404", p, w.Code)
		}
		if b := w.Body.String(); strings.Contains(b, "package ") || strings.Contains(b, "module ") {
			t.Errorf("GET %q showed source: %.80s", p, b)
		}
	}
}

package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
)

// mcpInitialize is an MCP initialize request.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`

// route is one request to the API and what it answers when nothing refuses it.
type route struct {
	name   string
	public bool // a probe: served whatever the Host
	send   func(t *testing.T, base string, header ...string) reply
	status int
}

// browserRoutes covers every kind of route: public probes, reads, JSON runs and search, uploads,
// delete, reload and MCP. Each install uses a fresh id (n counts them), so every one can succeed.
func browserRoutes(n *atomic.Int64) []route {
	fresh := func(t *testing.T) pkg {
		id := fmt.Sprintf("fresh-%d", n.Add(1))
		return pkg{"skill.json": []byte(manifestJSON(id, "")), "execute.wasm": wasmFixture(t, "hello")}
	}
	return []route{
		{"GET /healthz", true, func(t *testing.T, b string, h ...string) reply { return get(t, b+"/healthz", h...) }, 200},
		{"GET /openapi.json", true, func(t *testing.T, b string, h ...string) reply { return get(t, b+"/openapi.json", h...) }, 200},
		{"GET /v1/skills", false, func(t *testing.T, b string, h ...string) reply { return get(t, b+"/v1/skills", h...) }, 200},
		{"GET /metrics", false, func(t *testing.T, b string, h ...string) reply { return get(t, b+"/metrics", h...) }, 200},
		{"POST /v1/skills/{id}/runs", false, func(t *testing.T, b string, h ...string) reply {
			return post(t, b+"/v1/skills/hello/runs", `{}`, h...)
		}, 200},
		{"POST /v1/runs", false, func(t *testing.T, b string, h ...string) reply {
			return post(t, b+"/v1/runs", `{"skill":"hello"}`, h...)
		}, 200},
		{"POST /v1/skills/search", false, func(t *testing.T, b string, h ...string) reply {
			return post(t, b+"/v1/skills/search", `{"query":"hello"}`, h...)
		}, 200},
		{"POST /v1/skills (multipart)", false, func(t *testing.T, b string, h ...string) reply {
			return upload(t, "POST", b+"/v1/skills", fresh(t), nil, h...)
		}, 201},
		{"PUT /v1/skills/{id} (tar.gz)", false, func(t *testing.T, b string, h ...string) reply {
			return uploadTar(t, "PUT", b+"/v1/skills/echo", tarOf(pkg{"skill.json": []byte(manifestJSON("echo", `"parameters":{"type":"object"}`)), "execute.wasm": wasmFixture(t, "echo")}, ""), h...)
		}, 200},
		{"DELETE /v1/skills/{id}", false, func(t *testing.T, b string, h ...string) reply {
			return send(t, "DELETE", b+"/v1/skills/never-installed", nil, h...)
		}, 404},
		{"POST /v1/reload", false, func(t *testing.T, b string, h ...string) reply { return send(t, "POST", b+"/v1/reload", nil, h...) }, 200},
		{"POST /mcp", false, func(t *testing.T, b string, h ...string) reply {
			return post(t, b+"/mcp", mcpInitialize, append([]string{"Accept", "application/json, text/event-stream"}, h...)...)
		}, 200},
	}
}

// A keyless server answers only loopback Host names (DNS rebinding sends the attacker's name);
// the probes answer any.
func TestKeylessServerAnswersOnlyLoopbackHosts(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	port := env.ts.URL[strings.LastIndex(env.ts.URL, ":")+1:]
	hosts := []struct {
		host     string
		loopback bool
		sdk403   bool // the MCP SDK's own Host check knows only "localhost" and IP addresses
	}{
		{"evil.example", false, false},
		{"evil.example:" + port, false, false},
		{"localhost.evil.example:" + port, false, false},
		{"127.0.0.1.nip.io:" + port, false, false},
		{"0.0.0.0:" + port, false, false},
		{"192.168.1.10:" + port, false, false},
		{"[::]:" + port, false, false},
		{"127.0.0.1:" + port, true, false},
		{"127.0.0.1", true, false},
		{"127.1.2.3:" + port, true, false},
		{"localhost", true, false},
		{"localhost:" + port, true, false},
		{"LocalHost.:" + port, true, true},
		{"app.localhost:" + port, true, true},
		{"[::1]", true, false},
		{"[::1]:" + port, true, false},
		{"[::ffff:127.0.0.1]:" + port, true, false},
	}
	var n atomic.Int64
	for _, h := range hosts {
		for _, r := range browserRoutes(&n) {
			t.Run(h.host+" "+r.name, func(t *testing.T) {
				got := r.send(t, env.ts.URL, "Host", h.host)
				want := r.status
				if r.name == "POST /mcp" && h.sdk403 {
					want = http.StatusForbidden
				}
				if h.loopback || r.public {
					if got.status != want {
						t.Errorf("%s", got)
					}
					return
				}
				e := wantError(t, got, http.StatusMisdirectedRequest, "misdirected_request")
				for _, want := range []string{"not a loopback name", "API keys", "--keys", "localhost"} {
					if !strings.Contains(e.Error.Message, want) {
						t.Errorf("message %q does not say %q", e.Error.Message, want)
					}
				}
			})
		}
	}
}

// With keys, the keys protect the server: any Host is served (the MCP SDK keeps its own Host
// check on a loopback listener), but cross-site requests are refused all the same.
func TestWithKeysAnyHostButNoCrossSite(t *testing.T) {
	t.Parallel()
	env := watEnv(t, keysOptions(), 100)
	key := []string{"X-API-Key", roleKeys[access.RoleAdmin]}
	var n atomic.Int64
	for _, r := range browserRoutes(&n) {
		t.Run(r.name, func(t *testing.T) {
			want := r.status
			if r.name == "POST /mcp" {
				want = http.StatusForbidden // the SDK's DNS-rebinding check, in plain text
			}
			if got := r.send(t, env.ts.URL, append([]string{"Host", "skills.example.com"}, key...)...); got.status != want {
				t.Errorf("foreign Host with a key: %s", got)
			}
			got := r.send(t, env.ts.URL, append([]string{"Origin", "https://evil.example"}, key...)...)
			if r.public || r.name[:4] == "GET " {
				if got.status != r.status {
					t.Errorf("cross-site read with a key: %s", got)
				}
				return
			}
			wantError(t, got, http.StatusForbidden, "cross_site")
		})
	}
}

// A browser marks a request from another page with Sec-Fetch-Site (modern) or Origin: whatever
// changes state or runs something is refused from another origin, whatever its content type;
// reads and requests without these headers (curl, SDKs) pass.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	u, _ := url.Parse(env.ts.URL)
	crossSite := []struct {
		name   string
		header []string
	}{
		{"Origin of another site", []string{"Origin", "https://evil.example"}},
		{"Origin of another port", []string{"Origin", "http://" + u.Hostname() + ":1"}},
		{"Origin with another scheme", []string{"Origin", "https://" + u.Host}},
		{"Origin null", []string{"Origin", "null"}},
		{"Sec-Fetch-Site cross-site", []string{"Sec-Fetch-Site", "cross-site"}},
		{"Sec-Fetch-Site same-site", []string{"Sec-Fetch-Site", "same-site", "Origin", "http://localhost:3000"}},
		{"Sec-Fetch-Site cross-site with our own Origin", []string{"Sec-Fetch-Site", "cross-site", "Origin", env.ts.URL}},
	}
	sameOrigin := []struct {
		name   string
		header []string
	}{
		{"no browser headers", nil},
		{"our own Origin", []string{"Origin", env.ts.URL}},
		{"Sec-Fetch-Site same-origin", []string{"Sec-Fetch-Site", "same-origin", "Origin", env.ts.URL}},
		{"Sec-Fetch-Site none (typed by the user)", []string{"Sec-Fetch-Site", "none"}},
	}
	var n atomic.Int64
	for _, r := range browserRoutes(&n) {
		for _, c := range crossSite {
			t.Run(r.name+" "+c.name, func(t *testing.T) {
				got := r.send(t, env.ts.URL, c.header...)
				if r.public || strings.HasPrefix(r.name, "GET ") {
					if got.status != r.status {
						t.Errorf("a read was refused: %s", got)
					}
					return
				}
				e := wantError(t, got, http.StatusForbidden, "cross_site")
				for _, want := range []string{"cross-site", "--cors-origin"} {
					if !strings.Contains(e.Error.Message, want) {
						t.Errorf("message %q does not say %q", e.Error.Message, want)
					}
				}
			})
		}
		for _, c := range sameOrigin {
			t.Run(r.name+" "+c.name, func(t *testing.T) {
				if got := r.send(t, env.ts.URL, c.header...); got.status != r.status {
					t.Errorf("%s", got)
				}
			})
		}
	}
	// The finding's two attacks: a text/plain run and a multipart install, from a page.
	if r := send(t, "POST", env.ts.URL+"/v1/skills/hello/runs", strings.NewReader(`{}`), "Content-Type", "text/plain", "Origin", "https://evil.example"); r.status != http.StatusForbidden {
		t.Errorf("text/plain run from a page: %s", r)
	}
	if r := upload(t, "POST", env.ts.URL+"/v1/skills", pkg{"skill.json": []byte(manifestJSON("planted", "")), "execute.wasm": wasmFixture(t, "hello")}, nil, "Sec-Fetch-Site", "cross-site"); r.status != http.StatusForbidden {
		t.Errorf("multipart install from a page: %s", r)
	}
	if r := get(t, env.ts.URL+"/v1/skills/planted"); r.status != http.StatusNotFound {
		t.Errorf("the refused install installed: %s", r)
	}
}

// The JSON endpoints take only JSON: the content types a page may send to another origin
// without a preflight (text/plain, forms) are refused, with a message saying what to send.
func TestJSONEndpointsNeedAJSONContentType(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{}, 100)
	endpoints := []struct{ path, body string }{
		{"/v1/skills/hello/runs", `{}`},
		{"/v1/runs", `{"skill":"hello"}`},
		{"/v1/skills/search", `{"query":"hello"}`},
	}
	types := []struct {
		ctype string
		ok    bool
	}{
		{"", false},
		{"text/plain", false},
		{"text/plain;charset=UTF-8", false},
		{"application/x-www-form-urlencoded", false},
		{"multipart/form-data; boundary=x", false},
		{"text/json", false},
		{"application/jsonx", false},
		{"application/+json", false},
		{"application/json; charset", false},
		{"application/json", true},
		{"application/json; charset=utf-8", true},
		{"Application/JSON", true},
		{"application/vnd.skillbox+json", true},
	}
	for _, ep := range endpoints {
		for _, ct := range types {
			t.Run(ep.path+" "+ct.ctype, func(t *testing.T) {
				var header []string
				if ct.ctype != "" {
					header = []string{"Content-Type", ct.ctype}
				}
				r := send(t, "POST", env.ts.URL+ep.path, strings.NewReader(ep.body), header...)
				if ct.ok {
					if r.status != http.StatusOK {
						t.Errorf("%s", r)
					}
					return
				}
				e := wantError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
				for _, want := range []string{"Content-Type: application/json", "curl --json", ep.path} {
					if !strings.Contains(e.Error.Message, want) {
						t.Errorf("message %q does not say %q", e.Error.Message, want)
					}
				}
			})
		}
	}
	// An empty body too: a body-less POST is a simple request any page can send.
	wantError(t, send(t, "POST", env.ts.URL+"/v1/skills/hello/runs", nil), http.StatusUnsupportedMediaType, "unsupported_media_type")
}

// CORS is off by default, and on for exactly the configured origins: their preflights are
// answered, their requests pass and can be read; any other origin gets no CORS headers and is
// refused.
func TestCORS(t *testing.T) {
	t.Parallel()
	env := watEnv(t, Options{CORSOrigins: []string{"http://localhost:3000", "HTTPS://App.Example:443"}}, 100)
	off := watEnv(t, Options{}, 100)
	preflight := func(base, path, origin, method, headers string) reply {
		return send(t, "OPTIONS", base+path, nil, "Origin", origin, "Access-Control-Request-Method", method, "Access-Control-Request-Headers", headers)
	}
	t.Run("preflight from an allowed origin", func(t *testing.T) {
		for _, path := range []string{"/v1/skills/hello/runs", "/v1/runs", "/v1/skills", "/v1/skills/x", "/v1/reload", "/mcp"} {
			r := preflight(env.ts.URL, path, "http://localhost:3000", "POST", "content-type,authorization,mcp-session-id")
			h := r.header
			if r.status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
				!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") ||
				h.Get("Access-Control-Max-Age") != "600" || h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("%s %s: %v", path, r, h)
			}
		}
		if r := preflight(env.ts.URL, "/v1/skills/hello/runs", "https://app.example", "POST", "content-type"); r.header.Get("Access-Control-Allow-Origin") != "https://app.example" {
			t.Errorf("the normalised origin: %s %v", r, r.header)
		}
	})
	t.Run("the actual request from an allowed origin", func(t *testing.T) {
		r := post(t, env.ts.URL+"/v1/skills/hello/runs", `{}`, "Origin", "http://localhost:3000", "Sec-Fetch-Site", "same-site")
		if r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
			!strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "X-Request-ID") {
			t.Errorf("%s %v", r, r.header)
		}
		r = upload(t, "POST", env.ts.URL+"/v1/skills", pkg{"skill.json": []byte(manifestJSON("from-app", "")), "execute.wasm": wasmFixture(t, "hello")}, nil,
			"Origin", "https://app.example", "Sec-Fetch-Site", "cross-site")
		if r.status != http.StatusCreated {
			t.Errorf("install from an allowed origin: %s", r)
		}
		// Allowed to call, not to skip the content-type check; the page can read why.
		r = send(t, "POST", env.ts.URL+"/v1/skills/hello/runs", strings.NewReader(`{}`), "Content-Type", "text/plain", "Origin", "http://localhost:3000")
		wantError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type")
		if r.header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
			t.Errorf("the error is unreadable to the allowed page: %v", r.header)
		}
	})
	for _, o := range []string{"http://localhost:3001", "https://localhost:3000", "http://app.example", "https://evil.example", "null"} {
		t.Run("disallowed origin "+o, func(t *testing.T) {
			for _, base := range []string{env.ts.URL, off.ts.URL} {
				r := preflight(base, "/v1/skills/hello/runs", o, "POST", "content-type")
				for name := range r.header {
					if strings.HasPrefix(name, "Access-Control-") {
						t.Errorf("preflight from %s got %s: %v", o, name, r.header)
					}
				}
				r = post(t, base+"/v1/skills/hello/runs", `{}`, "Origin", o)
				wantError(t, r, http.StatusForbidden, "cross_site")
				if r.header.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("refusal carries CORS headers: %v", r.header)
				}
			}
		})
	}
	t.Run("off by default", func(t *testing.T) {
		r := preflight(off.ts.URL, "/v1/skills/hello/runs", "http://localhost:3000", "POST", "content-type")
		if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("%s %v", r, r.header)
		}
	})
}

func TestCORSOriginsAreValidated(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"http://localhost:3000":         "http://localhost:3000",
		"HTTP://LocalHost:3000":         "http://localhost:3000",
		"https://app.example:443":       "https://app.example",
		"http://app.example:80":         "http://app.example",
		"http://app.example:443":        "http://app.example:443",
		"http://127.0.0.1:8080":         "http://127.0.0.1:8080",
		"http://[::1]:8080":             "http://[::1]:8080",
		"http://[0:0::1]":               "http://[::1]",
		"chrome-extension://abcdefghij": "chrome-extension://abcdefghij",
	}
	for in, want := range good {
		got, err := ParseOrigin(in)
		if err != nil || got != want {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"*":                          "wildcards",
		"null":                       "sandboxed",
		"":                           "scheme://host[:port]",
		"localhost:3000":             "scheme://host[:port]",
		"http://":                    "scheme://host[:port]",
		"http://localhost:3000/":     "path",
		"http://localhost:3000/app":  "path",
		"http://localhost:3000?x=1":  "query",
		"http://localhost:3000?":     "query",
		"http://localhost:3000#top":  "fragment",
		"http://localhost:3000#":     "fragment",
		"http://user@localhost:3000": "user",
		"http://localhost:":          "empty port",
		"http://localhost:0":         "port",
		"http://localhost:65536":     "port",
		"http://*.example.com":       "host name",
		"https://bücher.example":     "xn--",
		"http://[fe80::1%25eth0]":    "zone",
		"http://a..b":                "host name",
		"http://local host":          "scheme://host[:port]",
	}
	rt := newEnv(t, Options{}).rt
	for in, want := range bad {
		_, err := New(rt, Options{CORSOrigins: []string{"http://ok.example", in}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "CORSOrigins[1]") || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("New with origin %q: %v; want an error naming it, the field and %q", in, err, want)
		}
	}
}

// The checks are part of Mount, so they hold in a user's own echo app; the app's own routes are
// the app's business.
func TestMountedAppRefusesForeignHostAndCrossSite(t *testing.T) {
	t.Parallel()
	ts := userApp(t, Options{})
	wantError(t, get(t, ts.URL+"/skills/v1/skills", "Host", "evil.example"), http.StatusMisdirectedRequest, "misdirected_request")
	wantError(t, post(t, ts.URL+"/skills/v1/skills/hello/runs", `{}`, "Origin", "https://evil.example"), http.StatusForbidden, "cross_site")
	wantError(t, send(t, "POST", ts.URL+"/skills/v1/skills/hello/runs", strings.NewReader(`{}`), "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, "unsupported_media_type")
	if r := get(t, ts.URL+"/", "Host", "evil.example"); r.status != http.StatusOK {
		t.Errorf("the user's own route: %s", r)
	}
}

package hostfuncs

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
)

// seenRequest is what a test server received.
type seenRequest struct {
	Method, Host, Path string
	Header             http.Header
	Body               []byte
}

// recorder is a loopback HTTP server that remembers every request it was sent.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seenRequest
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seenRequest{r.Method, r.Host, r.URL.RequestURI(), r.Header.Clone(), body})
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (rec *recorder) seen() []seenRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.reqs)
}

// port is the server's port; hostURL is its URL with host in place of 127.0.0.1.
func (rec *recorder) port() string { return strconv.Itoa(rec.Listener.Addr().(*net.TCPAddr).Port) }

func (rec *recorder) hostURL(host, path string) string {
	return "http://" + host + ":" + rec.port() + path
}

func grantList(t testing.TB, patterns ...string) netguard.List {
	t.Helper()
	var l netguard.List
	for _, s := range patterns {
		p, err := netguard.ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		l = append(l, p)
	}
	return l
}

var allowLoopback = netguard.Guard{Allow: []netip.Prefix{
	netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}}

func fetchLimits() Limits {
	return Limits{MaxFetches: 100, MaxFetchBytes: 1 << 20, FetchTimeout: 10 * time.Second}
}

// loopbackCall is a run granted the given host patterns, with loopback allowed by the guard.
func loopbackCall(t *testing.T, patterns ...string) *Call {
	return NewCall(&Grant{Hosts: grantList(t, patterns...), Guard: allowLoopback, Limits: fetchLimits()})
}

func request(method, url string, headers map[string]string) []byte {
	b, err := json.Marshal(FetchRequest{Method: method, URL: url, Headers: headers})
	if err != nil {
		panic(err)
	}
	return b
}

// fetchOK fails t unless r is OK, and returns the response and its body.
func fetchOK(t *testing.T, r reply) (FetchResponse, []byte) {
	t.Helper()
	wantReply(t, r, StatusOK)
	for k := range r.resp.Headers {
		if k != strings.ToLower(k) {
			t.Errorf("response header %q is not lower case", k)
		}
	}
	return *r.resp, r.resp.Body
}

func TestFetchGet(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Echo", r.Header.Get("X-Echo"))
		w.Header()["X-Multi"] = []string{"a", "b"}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "hello "+r.URL.Query().Get("q"))
	})
	c := loopbackCall(t, "127.0.0.1")
	url := srv.URL + "/path/x?q=world"
	h, body := fetchOK(t, c.fetch(context.Background(), request("", url, map[string]string{"x-echo": "ping"}), nil))
	if h.Status != http.StatusCreated || h.URL != url || string(body) != "hello world" {
		t.Errorf("head = %+v, body = %q", h, body)
	}
	want := map[string]string{"content-type": "text/plain; charset=utf-8", "x-echo": "ping", "x-multi": "a, b",
		"content-length": "11"}
	for k, v := range want {
		if h.Headers[k] != v {
			t.Errorf("headers[%q] = %q, want %q (all: %v)", k, h.Headers[k], v, h.Headers)
		}
	}
	seen := srv.seen()
	if len(seen) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(seen))
	}
	s := seen[0]
	if s.Method != "GET" || s.Path != "/path/x?q=world" || len(s.Body) != 0 {
		t.Errorf("server saw %s %s with body %q", s.Method, s.Path, s.Body)
	}
	if ua := s.Header.Get("User-Agent"); ua != "skillbox/1 (skillbox/v1)" {
		t.Errorf("User-Agent = %q", ua)
	}
	if s.Header.Get("X-Echo") != "ping" {
		t.Errorf("guest header lost: %v", s.Header)
	}
}

func TestFetchPostBinaryBody(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = io.Copy(w, r.Body)
	})
	c := loopbackCall(t, "127.0.0.1")
	body := make([]byte, 256)
	for i := range body {
		body[i] = byte(255 - i)
	}
	r := c.fetch(context.Background(), request("post", srv.URL+"/upload",
		map[string]string{"X-Test": "1", "Content-Type": "application/x-binary", "User-Agent": "my-skill/2"}), body)
	h, got := fetchOK(t, r)
	if h.Status != 200 || !bytes.Equal(got, body) {
		t.Fatalf("status %d, body %v: want 200 and the bytes sent", h.Status, got)
	}
	s := srv.seen()[0]
	if s.Method != "POST" || !bytes.Equal(s.Body, body) {
		t.Errorf("server saw %s with body %v", s.Method, s.Body)
	}
	for k, v := range map[string]string{"X-Test": "1", "Content-Type": "application/x-binary",
		"User-Agent": "my-skill/2", "Content-Length": "256"} {
		if s.Header.Get(k) != v {
			t.Errorf("server saw %s: %q, want %q", k, s.Header.Get(k), v)
		}
	}
	u := c.Usage()
	if u.Fetches != 1 || u.BytesOut != 256 || u.BytesIn != 256 {
		t.Errorf("usage = %+v, want 1 fetch, 256 bytes each way", u)
	}
	if want := []string{"127.0.0.1:" + srv.port()}; !slices.Equal(u.HostsContacted, want) {
		t.Errorf("HostsContacted = %q, want %q", u.HostsContacted, want)
	}
}

func TestFetchMethods(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.Method) })
	for _, m := range []string{"", "GET", "get", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "oPtIoNs"} {
		t.Run("method="+m, func(t *testing.T) {
			t.Parallel()
			c := loopbackCall(t, "127.0.0.1")
			h, body := fetchOK(t, c.fetch(context.Background(), request(m, srv.URL+"/m/"+m, nil), []byte{}))
			want := strings.ToUpper(m)
			if want == "" {
				want = "GET"
			}
			if want == "HEAD" {
				if len(body) != 0 {
					t.Errorf("HEAD returned a body %q", body)
				}
			} else if string(body) != want {
				t.Errorf("server saw method %q, want %q", body, want)
			}
			if h.Status != 200 {
				t.Errorf("status %d", h.Status)
			}
		})
	}
}

func TestFetchHTTPErrorStatusIsOK(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusInternalServerError)
	})
	c := loopbackCall(t, "127.0.0.1")
	h, body := fetchOK(t, c.fetch(context.Background(), request("GET", srv.URL, nil), nil))
	if h.Status != 500 || string(body) != "nope\n" {
		t.Errorf("head %+v, body %q: an HTTP error status is a response, not a failure", h, body)
	}
}

func TestFetchInvalid(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {})
	u := srv.URL + "/"
	hdr := func(k, v string) []byte { return request("GET", u, map[string]string{k: v}) }
	tests := []struct {
		name string
		head []byte
		want string
	}{
		{"empty head", nil, "not valid JSON"},
		{"not JSON", []byte("GET / HTTP/1.1"), "not valid JSON"},
		{"truncated JSON", []byte(`{"url":"` + u), "not valid JSON"},
		{"unknown field", []byte(`{"url":"` + u + `","body":"x"}`), `unknown field "body"`},
		{"wrong type", []byte(`{"url":1}`), "not valid JSON"},
		{"headers not an object", []byte(`{"url":"` + u + `","headers":["a"]}`), "not valid JSON"},
		{"header value not a string", []byte(`{"url":"` + u + `","headers":{"a":1}}`), "not valid JSON"},
		{"null head", []byte(`null`), "only http and https URLs are allowed"},
		{"method TRACE", request("TRACE", u, nil), `method "TRACE" is not one of GET HEAD POST PUT PATCH DELETE OPTIONS`},
		{"method CONNECT", request("CONNECT", u, nil), `method "CONNECT"`},
		{"method with space", request("GE T", u, nil), `method "GE T"`},
		{"method with newline", request("GET\n", u, nil), `method "GET\\n"`},
		{"ftp URL", request("GET", "ftp://127.0.0.1/x", nil), "ftp://127.0.0.1/x: only http and https"},
		{"file URL", request("GET", "file:///etc/passwd", nil), "only http and https"},
		{"javascript URL", request("GET", "javascript:alert(1)", nil), "only http and https"},
		{"no scheme", request("GET", "127.0.0.1/x", nil), "only http and https"},
		{"empty URL", request("GET", "", nil), "only http and https"},
		{"user and password", request("GET", "http://user:pw@"+srv.Listener.Addr().String()+"/", nil), "user info"},
		{"user only", request("GET", "http://user@"+srv.Listener.Addr().String()+"/", nil), "user info"},
		{"no host", request("GET", "http:///path", nil), "the URL has no host"},
		{"port only", request("GET", "http://:80/", nil), "the URL has no host"},
		{"bad escape", request("GET", "http://127.0.0.1/%zz", nil), "bad URL"},
		{"space in host", request("GET", "http://a b/", nil), "bad URL"},
		{"control character", request("GET", "http://127.0.0.1/\x7f", nil), "bad URL"},
		{"Host", hdr("Host", "evil.example"), `header "Host" is set by the host, not the skill`},
		{"host lower case", hdr("host", "evil.example"), `header "Host" is set by the host`},
		{"Content-Length", hdr("content-length", "5"), `header "Content-Length" is set by the host`},
		{"Transfer-Encoding", hdr("Transfer-Encoding", "chunked"), `"Transfer-Encoding" is set by the host`},
		{"Connection", hdr("CONNECTION", "close"), `"Connection" is set by the host`},
		{"Upgrade", hdr("Upgrade", "websocket"), `"Upgrade" is set by the host`},
		{"TE", hdr("TE", "trailers"), `"Te" is set by the host`},
		{"Trailer", hdr("Trailer", "X"), `"Trailer" is set by the host`},
		{"Proxy-Authorization", hdr("Proxy-Authorization", "Basic x"), `"Proxy-Authorization" is set by the host`},
		{"Proxy-Connection", hdr("Proxy-Connection", "x"), `"Proxy-Connection" is set by the host`},
		{"Keep-Alive", hdr("keep-alive", "x"), `"Keep-Alive" is set by the host`},
		{"header name with space", hdr("X Test", "1"), `header "X Test" has an invalid name or value`},
		{"header name with colon", hdr("X:Test", "1"), "invalid name or value"},
		{"header name non-ASCII", hdr("X-Tést", "1"), "invalid name or value"},
		{"header name with newline", hdr("X\nInjected", "1"), `header "X\\nInjected" has an invalid name`},
		{"empty header name", hdr("", "1"), "invalid name or value"},
		{"header name too long", hdr(strings.Repeat("X", 257), "1"), "invalid name or value"},
		{"header value with CRLF", hdr("X-Test", "1\r\nInjected: yes"), "invalid name or value"},
		{"header value with NUL", hdr("X-Test", "a\x00b"), "invalid name or value"},
		{"header value too long", hdr("X-Test", strings.Repeat("v", 8193)), "invalid name or value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := loopbackCall(t, "127.0.0.1")
			r := c.fetch(context.Background(), tt.head, []byte("body"))
			wantReply(t, r, StatusInvalid, tt.want)
			if d := c.Usage().Denied; len(d) != 0 {
				t.Errorf("an invalid request was recorded as denied: %q", d)
			}
		})
	}
	if n := len(srv.seen()); n != 0 {
		t.Errorf("server saw %d requests from invalid fetches, want none", n)
	}
	// Limits at their edge are fine.
	c := loopbackCall(t, "127.0.0.1")
	fetchOK(t, c.fetch(context.Background(), hdr(strings.Repeat("X", 256), strings.Repeat("v", 8192)), nil))
}

// An INVALID request never reaches the network, so it should use neither the fetch quota nor
// count as a fetch in the run's usage.
func TestFetchInvalidHeaderUsesNoQuota(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {})
	c := loopbackCall(t, "127.0.0.1")
	c.Grant.Limits.MaxFetches = 1
	wantReply(t, c.fetch(context.Background(), request("GET", srv.URL, map[string]string{"Host": "x"}), nil), StatusInvalid)
	if u := c.Usage(); u.Fetches != 0 {
		t.Errorf("Usage.Fetches = %d after an INVALID request, want 0", u.Fetches)
	}
	fetchOK(t, c.fetch(context.Background(), request("GET", srv.URL, nil), nil))
}

func TestFetchHostNotOnGrant(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {})
	tests := []struct {
		name     string
		patterns []string
		url      string
		want     []string
	}{
		{"no hosts", nil, srv.URL + "/x", []string{"host " + srv.Listener.Addr().String() + " is not on the grant",
			"(this run has no network access)"}},
		{"other host", []string{"example.com", "*.example.org"}, srv.URL + "/x",
			[]string{"is not on the grant", "(granted: example.com, *.example.org)"}},
		{"other port", []string{"127.0.0.1:1"}, srv.URL + "/x", []string{"is not on the grant", "(granted: 127.0.0.1:1)"}},
		{"default port of scheme", []string{"127.0.0.1:443"}, "http://127.0.0.1/x", []string{"host 127.0.0.1 is not on the grant"}},
		{"name vs address", []string{"localhost"}, srv.URL + "/x", []string{"is not on the grant"}},
		{"wildcard does not cover apex", []string{"*.example.com"}, "http://example.com/", []string{"host example.com is not on the grant"}},
		{"lookalike suffix", []string{"example.com"}, "http://evilexample.com/", []string{"not on the grant"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := NewCall(&Grant{Hosts: grantList(t, tt.patterns...), Guard: allowLoopback, Limits: fetchLimits()})
			r := c.fetch(context.Background(), request("GET", tt.url, nil), nil)
			wantReply(t, r, StatusDenied, tt.want...)
			u := c.Usage()
			if len(u.Denied) != 1 || !strings.HasPrefix(u.Denied[0], "fetch "+tt.url+": host ") ||
				!strings.HasSuffix(u.Denied[0], "is not on the grant") {
				t.Errorf("Denied = %q", u.Denied)
			}
			if u.Fetches != 0 || len(u.HostsContacted) != 0 {
				t.Errorf("a refused fetch was counted: %+v", u)
			}
		})
	}
	if n := len(srv.seen()); n != 0 {
		t.Errorf("server saw %d requests, want none", n)
	}
}

func TestFetchGuard(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "reached") })
	t.Run("default guard refuses loopback", func(t *testing.T) {
		t.Parallel()
		for _, u := range []string{srv.URL + "/", srv.hostURL("localhost", "/"), srv.hostURL("[::ffff:127.0.0.1]", "/")} {
			c := NewCall(&Grant{Hosts: grantList(t, "127.0.0.1", "localhost"), Limits: fetchLimits()})
			r := c.fetch(context.Background(), request("GET", u, nil), nil)
			wantReply(t, r, StatusDenied, "the destination address is loopback; the policy does not allow loopback addresses")
			if strings.Contains(string(r.payload), "127.0.0.1 is") {
				t.Errorf("the reply names the resolved address: %q", r.payload)
			}
			if d := c.Usage().Denied; len(d) != 1 || !strings.Contains(d[0], "loopback") {
				t.Errorf("Denied = %q", d)
			}
		}
	})
	t.Run("guard allows 127.0.0.1/32", func(t *testing.T) {
		t.Parallel()
		for _, host := range []string{"127.0.0.1", "localhost"} {
			c := NewCall(&Grant{Hosts: grantList(t, "127.0.0.1", "localhost"), Limits: fetchLimits(),
				Guard: netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
			_, body := fetchOK(t, c.fetch(context.Background(), request("GET", srv.hostURL(host, "/"), nil), nil))
			if string(body) != "reached" {
				t.Errorf("body %q", body)
			}
		}
	})
	t.Run("special addresses on the grant are still refused", func(t *testing.T) {
		t.Parallel()
		for u, class := range map[string]string{
			"http://10.0.0.1/":          "private",
			"http://192.168.1.1:8080/":  "private",
			"http://169.254.169.254/":   "cloud metadata",
			"http://[::1]/":             "loopback",
			"http://0.0.0.0/":           "unspecified",
			"http://100.64.0.1/":        "carrier-grade NAT",
			"http://[fe80::1]/":         "link-local",
			"http://[64:ff9b::a00:1]/":  "private",
			"http://[::ffff:10.0.0.1]/": "private",
		} {
			c := NewCall(&Grant{Hosts: grantList(t, "*"), Guard: allowLoopback, Limits: fetchLimits()})
			if strings.Contains(u, "[::1]") {
				c.Grant.Guard = netguard.Guard{}
			}
			wantReply(t, c.fetch(context.Background(), request("GET", u, nil), nil), StatusDenied, class)
		}
	})
	t.Cleanup(func() { // after the subtests
		if n := len(srv.seen()); n != 2 {
			t.Errorf("server saw %d requests, want 2 (only the allowed ones)", n)
		}
	})
}

func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	var srv *recorder
	srv = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/hop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
			if n > 0 {
				http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
				return
			}
			_, _ = io.WriteString(w, "arrived")
		case r.URL.Path == "/offgrant":
			http.Redirect(w, r, "http://example.com/stolen", http.StatusFound)
		case r.URL.Path == "/ftp":
			http.Redirect(w, r, "ftp://127.0.0.1/x", http.StatusFound)
		case r.URL.Path == "/private":
			http.Redirect(w, r, "http://10.1.2.3/", http.StatusFound)
		case r.URL.Path == "/to-localhost":
			http.Redirect(w, r, srv.hostURL("localhost", "/end"), http.StatusFound)
		case r.URL.Path == "/to-localhost-and-back":
			http.Redirect(w, r, srv.hostURL("localhost", "/to-ip"), http.StatusFound)
		case r.URL.Path == "/to-ip":
			http.Redirect(w, r, srv.hostURL("127.0.0.1", "/end"), http.StatusFound)
		case r.URL.Path == "/same-host":
			http.Redirect(w, r, "/end", http.StatusFound)
		case r.URL.Path == "/307":
			http.Redirect(w, r, "/end", http.StatusTemporaryRedirect)
		case r.URL.Path == "/end":
			_, _ = io.WriteString(w, r.Method+" "+r.Header.Get("Authorization"))
		}
	})
	call := func(t *testing.T) *Call { return loopbackCall(t, "127.0.0.1", "localhost", "10.1.2.3") }

	t.Run("five redirects are followed", func(t *testing.T) {
		t.Parallel()
		c := call(t)
		h, body := fetchOK(t, c.fetch(context.Background(), request("GET", srv.URL+"/hop/5", nil), nil))
		if h.URL != srv.URL+"/hop/0" || string(body) != "arrived" {
			t.Errorf("final %s %q, want %s/hop/0 arrived", h.URL, body, srv.URL)
		}
	})
	t.Run("six redirects are refused", func(t *testing.T) {
		t.Parallel()
		c := call(t)
		r := c.fetch(context.Background(), request("GET", srv.URL+"/hop/6", nil), nil)
		wantReply(t, r, StatusDenied, srv.URL+"/hop/6: more than 5 redirects")
		if d := c.Usage().Denied; len(d) != 1 || !strings.Contains(d[0], "more than 5 redirects") {
			t.Errorf("Denied = %q", d)
		}
	})
	t.Run("redirect off the grant", func(t *testing.T) {
		t.Parallel()
		c := call(t)
		r := c.fetch(context.Background(), request("GET", srv.URL+"/offgrant", nil), nil)
		wantReply(t, r, StatusDenied, "redirect to example.com, which is not on the grant")
		if d := c.Usage().Denied; len(d) != 1 || !strings.HasPrefix(d[0], "fetch "+srv.URL+"/offgrant: redirect to example.com") {
			t.Errorf("Denied = %q", d)
		}
		if slices.Contains(c.Usage().HostsContacted, "example.com") {
			t.Error("example.com was contacted")
		}
	})
	t.Run("redirect to another scheme", func(t *testing.T) {
		t.Parallel()
		wantReply(t, call(t).fetch(context.Background(), request("GET", srv.URL+"/ftp", nil), nil),
			StatusDenied, "redirect to a ftp URL")
	})
	t.Run("redirect to a granted private address is checked by the guard", func(t *testing.T) {
		t.Parallel()
		wantReply(t, call(t).fetch(context.Background(), request("GET", srv.URL+"/private", nil), nil),
			StatusDenied, "the destination address is private")
	})
	// Not parallel, so that the requests the server sees meanwhile are this subtest's only.
	t.Run("cross-host redirect drops Authorization and Cookie", func(t *testing.T) {
		before := len(srv.seen())
		for _, path := range []string{"/to-localhost", "/to-localhost-and-back"} {
			c := call(t)
			r := c.fetch(context.Background(), request("GET", srv.URL+path, map[string]string{
				"Authorization": "Bearer guest-token", "Cookie": "session=1", "X-Keep": "kept",
			}), nil)
			h, body := fetchOK(t, r)
			if string(body) != "GET " {
				t.Errorf("%s: final hop %s saw Authorization %q", path, h.URL, strings.TrimPrefix(string(body), "GET "))
			}
		}
		seen := srv.seen()[before:]
		if len(seen) != 5 {
			t.Errorf("server saw %d requests, want 5 (2 + 3 hops)", len(seen))
		}
		for _, s := range seen {
			if s.Path == "/end" && (s.Header.Get("Authorization") != "" || s.Header.Get("Cookie") != "") {
				t.Errorf("request to %s%s carried Authorization %q, Cookie %q", s.Host, s.Path,
					s.Header.Get("Authorization"), s.Header.Get("Cookie"))
			}
			if s.Path == "/end" && s.Header.Get("X-Keep") != "kept" {
				t.Errorf("an ordinary header was dropped on redirect: %v", s.Header)
			}
		}
	})
	t.Run("same-host redirect keeps Authorization", func(t *testing.T) {
		t.Parallel()
		r := call(t).fetch(context.Background(), request("GET", srv.URL+"/same-host",
			map[string]string{"Authorization": "Bearer guest-token"}), nil)
		if _, body := fetchOK(t, r); string(body) != "GET Bearer guest-token" {
			t.Errorf("body %q", body)
		}
	})
	t.Run("307 keeps method and body", func(t *testing.T) {
		t.Parallel()
		r := call(t).fetch(context.Background(), request("PUT", srv.URL+"/307", nil), []byte("payload"))
		if h, body := fetchOK(t, r); string(body) != "PUT " || h.URL != srv.URL+"/end" {
			t.Errorf("final %s %q", h.URL, body)
		}
	})
}

func TestFetchSecrets(t *testing.T) {
	t.Parallel()
	var srv *recorder
	srv = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a-to-b":
			http.Redirect(w, r, srv.hostURL("localhost", "/landed"), http.StatusFound)
		case "/b-to-a":
			http.Redirect(w, r, srv.hostURL("127.0.0.1", "/landed"), http.StatusFound)
		}
		w.Header().Set("X-Seen-Key", "len="+strconv.Itoa(len(r.Header.Get("X-Api-Key"))))
	})
	// Host A is 127.0.0.1, host B is localhost: one server, two names.
	newCall := func(t *testing.T) *Call {
		c := loopbackCall(t, "127.0.0.1", "localhost")
		c.Grant.Secrets = []Secret{
			{Name: "api", Hosts: grantList(t, "127.0.0.1"), Header: "X-Api-Key", Value: "s3cret-A"},
			{Name: "auth", Hosts: grantList(t, "127.0.0.1:"+srv.port()), Header: "Authorization", Value: "Bearer s3cret-auth"},
			{Name: "other", Hosts: grantList(t, "127.0.0.1:1"), Header: "X-Other", Value: "never"},
		}
		return c
	}
	keyOf := func(s seenRequest) string { return s.Header.Get("X-Api-Key") + "|" + s.Header.Get("Authorization") }
	tests := []struct {
		path string
		host string
		want map[string]string // request Host+Path -> X-Api-Key|Authorization the server saw
	}{
		// Plain http: secrets are never sent, not even to their own hosts.
		{"/a", "127.0.0.1", map[string]string{"127.0.0.1/a": "|"}},
		{"/b", "localhost", map[string]string{"localhost/b": "|"}},
		{"/a-to-b", "127.0.0.1", map[string]string{"127.0.0.1/a-to-b": "|", "localhost/landed": "|"}},
		{"/b-to-a", "localhost", map[string]string{"localhost/b-to-a": "|", "127.0.0.1/landed": "|"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			c := newCall(t)
			before := len(srv.seen())
			r := c.fetch(context.Background(), request("GET", srv.hostURL(tt.host, tt.path), nil), nil)
			h, _ := fetchOK(t, r)
			if strings.Contains(string(r.payload), "s3cret") {
				t.Errorf("a secret reached the reply: %q", r.payload)
			}
			got := map[string]string{}
			for _, s := range srv.seen()[before:] {
				got[strings.TrimSuffix(s.Host, ":"+srv.port())+s.Path] = keyOf(s)
				if s.Header.Get("X-Other") != "" {
					t.Errorf("secret for another port sent to %s", s.Host)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("server saw %v, want %v (final %s)", got, tt.want, h.URL)
			}
		})
	}
}

// Over https, a secret goes to its hosts and ports only, and not to a plain-http hop of a redirect.
func TestFetchSecretsOverTLS(t *testing.T) {
	t.Parallel()
	var plain *httptest.Server
	seen := make(chan string, 8)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- "https " + r.URL.Path + " " + r.Header.Get("X-Api-Key")
		if r.URL.Path == "/to-plain" {
			http.Redirect(w, r, plain.URL+"/plain", http.StatusFound)
		}
	}))
	defer tlsSrv.Close()
	plain = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- "http " + r.URL.Path + " " + r.Header.Get("X-Api-Key")
	}))
	defer plain.Close()
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	c := loopbackCall(t, "127.0.0.1")
	c.Grant.RootCAs = pool
	c.Grant.Secrets = []Secret{{Name: "api", Hosts: grantList(t, "127.0.0.1"), Header: "X-Api-Key", Value: "s3cret"}}

	fetchOK(t, c.fetch(context.Background(), request("GET", tlsSrv.URL+"/direct", nil), nil))
	if got := <-seen; got != "https /direct s3cret" {
		t.Errorf("direct: %q", got)
	}
	fetchOK(t, c.fetch(context.Background(), request("GET", tlsSrv.URL+"/to-plain", nil), nil))
	if got := <-seen; got != "https /to-plain s3cret" {
		t.Errorf("first hop: %q", got)
	}
	if got := <-seen; got != "http /plain " {
		t.Errorf("a secret followed a redirect to plain http: %q", got)
	}
	// Without the test CA, the server's certificate is refused: no fallback to insecure TLS.
	c2 := loopbackCall(t, "127.0.0.1")
	wantReply(t, c2.fetch(context.Background(), request("GET", tlsSrv.URL+"/x", nil), nil), StatusFailed, "certificate")
}

// docs/abi.md: "the headers of granted secrets cannot be set by the guest".
func TestFetchGuestCannotSetSecretHeader(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {})
	c := loopbackCall(t, "127.0.0.1", "localhost")
	c.Grant.Secrets = []Secret{{Name: "api", Hosts: grantList(t, "127.0.0.1"), Header: "X-Api-Key", Value: "s3cret"}}
	for _, name := range []string{"X-Api-Key", "x-api-key"} {
		r := c.fetch(context.Background(), request("GET", srv.hostURL("localhost", "/"), map[string]string{name: "forged"}), nil)
		wantReply(t, r, StatusInvalid, "X-Api-Key")
	}
	if n := len(srv.seen()); n != 0 {
		t.Errorf("server saw %d requests carrying a guest-set secret header", n)
	}
}

func TestFetchMaxFetches(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {})
	c := loopbackCall(t, "127.0.0.1")
	c.Grant.Limits.MaxFetches = 2
	get := request("GET", srv.URL, nil)
	fetchOK(t, c.fetch(context.Background(), get, nil))
	// A denied host does not use a fetch.
	wantReply(t, c.fetch(context.Background(), request("GET", "http://example.com/", nil), nil), StatusDenied)
	fetchOK(t, c.fetch(context.Background(), get, nil))
	for range 3 {
		wantReply(t, c.fetch(context.Background(), get, nil), StatusLimit, "the run's maxFetches (2) is used up")
	}
	if n := len(srv.seen()); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
	if u := c.Usage(); u.Fetches != 2 {
		t.Errorf("Fetches = %d, want 2", u.Fetches)
	}

	zero := loopbackCall(t, "127.0.0.1")
	zero.Grant.Limits.MaxFetches = 0
	wantReply(t, zero.fetch(context.Background(), get, nil), StatusLimit, "maxFetches (0)")
}

func TestFetchMaxFetchesConcurrent(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "x") })
	c := loopbackCall(t, "127.0.0.1")
	c.Grant.Limits.MaxFetches = 5
	var wg sync.WaitGroup
	statuses := make([]Status, 20)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.fetch(context.Background(), request("GET", srv.URL, nil), nil).status
		}()
	}
	wg.Wait()
	count := map[Status]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[StatusOK] != 5 || count[StatusLimit] != 15 {
		t.Errorf("statuses %v, want 5 OK and 15 LIMIT", count)
	}
	if u := c.Usage(); u.Fetches != 5 || u.BytesIn != 5 {
		t.Errorf("usage %+v", u)
	}
}

func TestFetchResponseLimit(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		for i := range n {
			_, _ = w.Write([]byte{'a' + byte(i%26)})
			if i == 0 {
				w.(http.Flusher).Flush() // no Content-Length: chunked
			}
		}
	})
	tests := []struct {
		name  string
		query string
		want  Status
		msg   string
	}{
		{"exactly the limit", "n=10", StatusOK, ""},
		{"over with Content-Length", "n=11", StatusLimit, "response of 11 bytes is more than maxFetchBytes (10)"},
		{"far over with Content-Length", "n=100000", StatusLimit, "response of 100000 bytes is more than maxFetchBytes (10)"},
		{"exactly the limit chunked", "n=10&chunked=1", StatusOK, ""},
		{"over without Content-Length", "n=11&chunked=1", StatusLimit, "response is more than maxFetchBytes (10)"},
		{"far over without Content-Length", "n=100000&chunked=1", StatusLimit, "response is more than maxFetchBytes (10)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := loopbackCall(t, "127.0.0.1")
			c.Grant.Limits.MaxFetchBytes = 10
			r := c.fetch(context.Background(), request("GET", srv.URL+"/?"+tt.query, nil), nil)
			if tt.want == StatusOK {
				if _, body := fetchOK(t, r); string(body) != "abcdefghij" {
					t.Errorf("body %q", body)
				}
				return
			}
			wantReply(t, r, tt.want, tt.msg)
			if in := c.Usage().BytesIn; in > 11 {
				t.Errorf("BytesIn = %d: read more than maxFetchBytes+1", in)
			}
		})
	}
	c := loopbackCall(t, "127.0.0.1")
	c.Grant.Limits.MaxFetchBytes = 0
	fetchOK(t, c.fetch(context.Background(), request("GET", srv.URL+"/?n=0", nil), nil))
	wantReply(t, c.fetch(context.Background(), request("GET", srv.URL+"/?n=1&chunked=1", nil), nil), StatusLimit)
}

// A compressed response is limited by its decompressed size: a small gzip body that inflates past
// maxFetchBytes fails with LIMIT, and the host never inflates more than maxFetchBytes+1 bytes.
func TestFetchGzipBomb(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(gz.Bytes())
	})
	c := loopbackCall(t, "127.0.0.1")
	c.Grant.Limits.MaxFetchBytes = 4096
	wantReply(t, c.fetch(context.Background(), request("GET", srv.URL, nil), nil), StatusLimit, "more than maxFetchBytes (4096)")
	if in := c.Usage().BytesIn; in != 4097 {
		t.Errorf("BytesIn = %d, want 4097 (maxFetchBytes+1)", in)
	}
	// The same body within the limit arrives decompressed, without Content-Encoding.
	c.Grant.Limits.MaxFetchBytes = 1 << 20
	h, body := fetchOK(t, c.fetch(context.Background(), request("GET", srv.URL, nil), nil))
	if len(body) != 1<<20 || h.Headers["content-encoding"] != "" {
		t.Errorf("%d bytes, content-encoding %q", len(body), h.Headers["content-encoding"])
	}
}

// A HEAD response has no body, whatever its Content-Length says (RFC 9110 §9.3.2): checking the size
// of a large resource with HEAD must not fail with LIMIT.
func TestFetchHeadOfLargeResource(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		if r.Method != http.MethodHead {
			_, _ = w.Write(bytes.Repeat([]byte("x"), 1000))
		}
	})
	c := loopbackCall(t, "127.0.0.1")
	c.Grant.Limits.MaxFetchBytes = 10
	h, body := fetchOK(t, c.fetch(context.Background(), request("HEAD", srv.URL, nil), nil))
	if len(body) != 0 || h.Headers["content-length"] != "1000" {
		t.Errorf("head %+v, body %q", h, body)
	}
}

// hang returns a handler that never answers until the client gives up or the test ends.
func hang(t *testing.T, afterHeader bool) http.HandlerFunc {
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return func(w http.ResponseWriter, r *http.Request) {
		if afterHeader {
			w.Header().Set("Content-Length", "100")
			_, _ = io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}
}

func TestFetchTimeouts(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, hang(t, false))
	slowBody := newRecorder(t, hang(t, true))
	t.Run("FetchTimeout", func(t *testing.T) {
		t.Parallel()
		c := loopbackCall(t, "127.0.0.1")
		c.Grant.Limits.FetchTimeout = 200 * time.Millisecond
		start := time.Now()
		r := c.fetch(context.Background(), request("GET", srv.URL+"/slow", nil), nil)
		wantReply(t, r, StatusFailed, srv.URL+"/slow: timed out")
		// The server never answers: that the fetch returns says the timeout ended it. It must not
		// end before the timeout (a loaded machine only makes it later).
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("gave up after %v, before its timeout of 200ms", d)
		}
		if len(c.Usage().Denied) != 0 {
			t.Errorf("a timeout was recorded as denied")
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		t.Parallel()
		c := loopbackCall(t, "127.0.0.1") // FetchTimeout 10s: the run's deadline comes first
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		wantReply(t, c.fetch(ctx, request("GET", srv.URL+"/slow", nil), nil), StatusFailed, "timed out")
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("gave up after %v, before the deadline of 200ms", d)
		}
	})
	t.Run("context canceled", func(t *testing.T) {
		t.Parallel()
		c := loopbackCall(t, "127.0.0.1")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		wantReply(t, c.fetch(ctx, request("GET", srv.URL+"/slow", nil), nil), StatusFailed, "canceled")
	})
	t.Run("body stalls after the header", func(t *testing.T) {
		t.Parallel()
		c := loopbackCall(t, "127.0.0.1")
		c.Grant.Limits.FetchTimeout = 200 * time.Millisecond
		r := c.fetch(context.Background(), request("GET", slowBody.URL+"/slow", nil), nil)
		wantReply(t, r, StatusFailed, slowBody.URL+"/slow: reading the response")
	})
}

func TestFetchConnectionFailures(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := loopbackCall(t, "127.0.0.1", "no-such-host.invalid")
	r := c.fetch(context.Background(), request("GET", "http://"+addr+"/", nil), nil)
	wantReply(t, r, StatusFailed, "http://"+addr+"/: ", "connection refused")
	if strings.Contains(string(r.payload), `Get "`) {
		t.Errorf("message %q repeats the url.Error wrapper", r.payload)
	}

	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	wantReply(t, c.fetch(context.Background(), request("GET", tlsSrv.URL, nil), nil), StatusFailed, "certificate")

	// Plain HTTP to a TLS port, and the reverse, fail without hanging.
	wantReply(t, c.fetch(context.Background(), request("GET", strings.Replace(tlsSrv.URL, "https", "http", 1), nil), nil), StatusOK)
	if d := c.Usage().Denied; len(d) != 0 {
		t.Errorf("failures recorded as denied: %q", d)
	}
}

// Proxy variables of the host are ignored: a fetch goes straight to its destination (where the
// guard checks it), never through a proxy. Not parallel: it sets the environment.
func TestFetchIgnoresProxyEnvironment(t *testing.T) {
	var proxyHits int
	var mu sync.Mutex
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		proxyHits++
		mu.Unlock()
		_, _ = io.WriteString(w, "via proxy")
	}))
	defer proxy.Close()
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "direct") })
	c := loopbackCall(t, "127.0.0.1", "proxy-check.invalid")
	c.Grant.Limits.FetchTimeout = 5 * time.Second
	if _, body := fetchOK(t, c.fetch(context.Background(), request("GET", srv.URL, nil), nil)); string(body) != "direct" {
		t.Errorf("body %q", body)
	}
	// Go never proxies loopback destinations anyway; a name that does not resolve would go
	// through the proxy if the environment were used, and must fail instead.
	r := c.fetch(context.Background(), request("GET", "http://proxy-check.invalid/", nil), nil)
	if r.status == StatusOK {
		t.Errorf("fetch of an unresolvable name = OK %q: it went through the proxy", r.payload)
	}
	wantReply(t, r, StatusFailed)
	mu.Lock()
	defer mu.Unlock()
	if proxyHits != 0 {
		t.Errorf("the proxy from the environment got %d requests", proxyHits)
	}
}

func TestFetchUsage(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, _ = io.Copy(w, r.Body)
			return
		}
		_, _ = io.WriteString(w, "12345")
	})
	c := loopbackCall(t, "127.0.0.1", "localhost")
	fetchOK(t, c.fetch(context.Background(), request("GET", srv.URL, nil), nil))
	fetchOK(t, c.fetch(context.Background(), request("POST", srv.hostURL("localhost", "/"), nil), []byte("1234567")))
	fetchOK(t, c.fetch(context.Background(), request("POST", srv.URL, nil), []byte("ab")))
	wantReply(t, c.fetch(context.Background(), request("GET", "http://example.com/", nil), nil), StatusDenied)
	u := c.Usage()
	if u.Fetches != 3 || u.BytesOut != 9 || u.BytesIn != 14 {
		t.Errorf("usage = %+v, want 3 fetches, 9 bytes out, 14 in", u)
	}
	want := []string{"127.0.0.1:" + srv.port(), "localhost:" + srv.port()}
	if !slices.Equal(u.HostsContacted, want) {
		t.Errorf("HostsContacted = %q, want %q", u.HostsContacted, want)
	}
	if len(u.Denied) != 1 {
		t.Errorf("Denied = %q", u.Denied)
	}
}

func FuzzFetchRequest(f *testing.F) {
	for _, s := range []string{
		`{"url":"http://127.0.0.1/"}`, `{"method":"POST","url":"https://api.example.com/x","headers":{"A":"b"}}`,
		`{"url":"http://[::1]:80/"}`, `{"url":"http://user:pw@example.com/"}`, `{"method":"TRACE"}`,
		`{"url":"ftp://x/"}`, `null`, `[]`, `{"url":"http://example.com/","headers":{"Host":"x"}}`, ``,
		`{"url":"http://%31%32%37.0.0.1/"}`, `{"url":"http://0x7f.1/"}`, `{"url":"http://2130706433/"}`,
	} {
		f.Add([]byte(s), []byte("body"))
	}
	f.Fuzz(func(t *testing.T, head, body []byte) {
		c := NewCall(&Grant{Limits: Limits{MaxFetches: 1000, MaxFetchBytes: 1 << 10, FetchTimeout: time.Second}})
		r := c.fetch(context.Background(), head, body)
		if r.status == StatusOK {
			t.Fatalf("fetch(%q) = OK on a grant with no hosts", head)
		}
		if r.status != StatusInvalid && r.status != StatusDenied {
			t.Fatalf("fetch(%q) = %v %q: want INVALID or DENIED with no hosts", head, r.status, r.payload)
		}
		if u := c.Usage(); u.Fetches != 0 || u.BytesOut != 0 || len(u.HostsContacted) != 0 {
			t.Fatalf("fetch(%q) reached the network: %+v", head, u)
		}
	})
}

// A granted host that reflects the request hands the injected secret back: the guest gets it
// redacted, in the headers, the body and the final URL, whether formatted or raw.
func TestFetchSecretsAreRedactedFromResponses(t *testing.T) {
	t.Parallel()
	const raw = "sk-live-0123456789"
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/landed?token="+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), http.StatusFound)
			return
		}
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		w.Header().Set("Content-Length", strconv.Itoa(len("auth="+r.Header.Get("Authorization")+" raw="+raw)))
		_, _ = io.WriteString(w, "auth="+r.Header.Get("Authorization")+" raw="+raw)
	}))
	defer tlsSrv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	c := loopbackCall(t, "127.0.0.1")
	c.Grant.RootCAs = pool
	c.Grant.Secrets = []Secret{{Name: "api", Hosts: grantList(t, "127.0.0.1"), Header: "Authorization", Value: "Bearer " + raw, Raw: raw}}

	h, body := fetchOK(t, c.fetch(context.Background(), request("GET", tlsSrv.URL+"/echo", nil), nil))
	if strings.Contains(string(body), raw) || strings.Contains(h.Headers["x-echo-auth"], raw) {
		t.Errorf("the secret came back: headers %v, body %q", h.Headers, body)
	}
	if string(body) != "auth=[redacted] raw=[redacted]" || h.Headers["x-echo-auth"] != "[redacted]" {
		t.Errorf("headers %v, body %q", h.Headers, body)
	}
	if h.Headers["content-length"] != strconv.Itoa(len(body)) {
		t.Errorf("content-length %q for a body of %d bytes", h.Headers["content-length"], len(body))
	}
	h, _ = fetchOK(t, c.fetch(context.Background(), request("GET", tlsSrv.URL+"/redirect", nil), nil))
	if strings.Contains(h.URL, raw) || !strings.Contains(h.URL, "token=[redacted]") && !strings.Contains(h.URL, "token=%5Bredacted%5D") {
		t.Errorf("final URL %q", h.URL)
	}
	// Over plain http no secret is sent, so nothing is redacted: the guest's own data stays.
	plain := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, raw) })
	_, body = fetchOK(t, c.fetch(context.Background(), request("GET", plain.URL, nil), nil))
	if string(body) != raw {
		t.Errorf("a response of a request that carried no secret was changed: %q", body)
	}
}

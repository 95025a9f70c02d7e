package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// probePage is a web page that calls the API the way an attacker's page (or the operator's own)
// would, then reports what it could see to /report on its own origin and goes on to cfg.next.
const probePage = `<!doctype html><meta charset="utf-8"><title>probe</title><script>
const cfg = %s;
async function probe(fn) {
  try { return await fn(); } catch (e) { return {error: e.name}; }
}
(async () => {
  const out = {name: cfg.name, origin: location.origin};
  out.read = await probe(async () => {
    const r = await fetch(cfg.api + '/v1/skills');
    return {status: r.status, listed: (await r.text()).includes('"echo"')};
  });
  out.jsonRun = await probe(async () => {
    const r = await fetch(cfg.api + '/v1/skills/echo/runs?json', {method: 'POST',
      headers: {'Content-Type': 'application/json'}, body: JSON.stringify({args: {from: cfg.name}})});
    return {status: r.status, body: await r.json()};
  });
  // A "simple" request: text/plain, no preflight; the page cannot read the answer.
  out.simpleRun = await probe(async () => {
    const r = await fetch(cfg.api + '/v1/skills/echo/runs?simple', {method: 'POST', mode: 'no-cors',
      body: JSON.stringify({args: {from: cfg.name}})});
    return {type: r.type};
  });
  // A multipart install, also simple.
  out.formInstall = await probe(async () => {
    const f = new FormData();
    f.append('id', 'planted-' + cfg.name);
    f.append('SKILL.md', new Blob(['---\nname: planted\ndescription: Planted by a page.\n---\n\nx\n']), 'SKILL.md');
    const r = await fetch(cfg.api + '/v1/skills', {method: 'POST', mode: 'no-cors', body: f});
    return {type: r.type};
  });
  await fetch('/report', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(out)});
  if (cfg.next) location.href = cfg.next;
})();
</script>`

// pageReport is what a probe page saw.
type pageReport struct {
	Name   string `json:"name"`
	Origin string `json:"origin"`
	Read   struct {
		Status int    `json:"status"`
		Listed bool   `json:"listed"`
		Error  string `json:"error"`
	} `json:"read"`
	JSONRun struct {
		Status int        `json:"status"`
		Body   run.Result `json:"body"`
		Error  string     `json:"error"`
	} `json:"jsonRun"`
	SimpleRun   struct{ Type, Error string } `json:"simpleRun"`
	FormInstall struct{ Type, Error string } `json:"formInstall"`
}

// seen is one request the API answered, as the browser sent it.
type seen struct {
	method, uri, host, origin, site string
	status                          int
}

// recorder notes each API request's status as it is written, before the browser can see it.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{method: r.Method, uri: r.URL.RequestURI(), host: r.Host, origin: r.Header.Get("Origin"), site: r.Header.Get("Sec-Fetch-Site")}
		h.ServeHTTP(&statusWriter{ResponseWriter: w, note: func(status int) {
			s.status = status
			rec.mu.Lock()
			rec.reqs = append(rec.reqs, s)
			rec.mu.Unlock()
		}}, r)
	})
}

// find returns the requests with method and uri from origin.
func (rec *recorder) find(method, uri, origin string) []seen {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []seen
	for _, s := range rec.reqs {
		if s.method == method && s.uri == uri && s.origin == origin {
			out = append(out, s)
		}
	}
	return out
}

type statusWriter struct {
	http.ResponseWriter
	note  func(int)
	noted bool
}

func (w *statusWriter) WriteHeader(status int) {
	if !w.noted {
		w.noted = true
		w.note(status)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if !w.noted {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// chromium returns the browser, or skips when it is missing unless SKILLBOX_REQUIRE_TOOLCHAINS
// is set (CI sets it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SKILLBOX_REQUIRE_TOOLCHAINS") == "" {
		t.Skip("chromium is missing (apt-get install chromium)")
	}
	t.Fatal("chromium is missing and SKILLBOX_REQUIRE_TOOLCHAINS is set")
	return ""
}

// TestRealBrowser loads pages in headless Chromium that call a keyless API on another loopback
// port: one from an origin the server does not allow, one from an allowed origin (CORS), and a
// DNS-rebinding page (evil.test, mapped to 127.0.0.1 by the browser, served from the API's own
// port so that its requests are same-origin). The browser's own Origin and Sec-Fetch-Site
// headers decide, not a test's imitation of them.
func TestRealBrowser(t *testing.T) {
	bin := chromium(t)
	reports := make(chan pageReport, 8)
	page := func(cfg map[string]string) http.Handler {
		conf, _ := json.Marshal(cfg)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/report":
				var rep pageReport
				if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
					t.Errorf("report: %v", err)
				}
				reports <- rep
			case "/page.html":
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprintf(w, probePage, conf)
			default:
				http.NotFound(w, r)
			}
		})
	}

	// Three loopback servers, their addresses known before any starts: the page from another
	// origin, the page from the allowed origin, and the API.
	other, allowed, api := httptest.NewUnstartedServer(nil), httptest.NewUnstartedServer(nil), httptest.NewUnstartedServer(nil)
	base := func(ts *httptest.Server) string { return "http://" + ts.Listener.Addr().String() }
	_, port, _ := strings.Cut(api.Listener.Addr().String(), ":")
	rebound := "http://evil.test:" + port
	other.Config.Handler = page(map[string]string{"name": "other", "api": base(api), "next": base(allowed) + "/page.html"})
	allowed.Config.Handler = page(map[string]string{"name": "allowed", "api": base(api), "next": rebound + "/page.html"})

	dir := t.TempDir()
	fixture(t, dir, "echo", manifestJSON("echo", `"parameters":{"type":"object"}`), "echo", nil)
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testCache})})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	srv, err := New(rt, Options{CORSOrigins: []string{base(allowed)}})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	apiHandler := rec.wrap(srv.Handler())
	rebind := page(map[string]string{"name": "rebound", "api": ""})
	// The API's port also serves the rebinding page and its report, as the attacker's server did
	// on that port before evil.test resolved to 127.0.0.1.
	api.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page.html" || r.URL.Path == "/report" {
			rebind.ServeHTTP(w, r)
			return
		}
		apiHandler.ServeHTTP(w, r)
	})
	for _, ts := range []*httptest.Server{other, allowed, api} {
		ts.Start()
		defer ts.Close()
	}

	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--host-resolver-rules=MAP evil.test 127.0.0.1", "--disable-features=HttpsUpgrades",
		base(other)+"/page.html")
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers go with it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	got := map[string]pageReport{}
	for len(got) < 3 {
		select {
		case r := <-reports:
			got[r.Name] = r
			t.Logf("%s (%s): %+v", r.Name, r.Origin, r)
		case <-time.After(2 * time.Minute):
			t.Fatalf("only %d of 3 pages reported; chromium:\n%s", len(got), stderr.String())
		}
	}

	// A page from another origin: it can neither read nor call with JSON (no CORS), and its
	// simple requests, which the browser does send, are refused.
	o := got["other"]
	if o.Read.Error != "TypeError" || o.JSONRun.Error != "TypeError" {
		t.Errorf("another origin's page read the API: %+v %+v", o.Read, o.JSONRun)
	}
	if n := len(rec.find("POST", "/v1/skills/echo/runs?json", other.URL)); n != 0 {
		t.Errorf("the JSON run from another origin passed its preflight %d times", n)
	}
	for _, uri := range []string{"/v1/skills/echo/runs?simple", "/v1/skills"} {
		for _, s := range rec.find("POST", uri, other.URL) {
			if s.status != http.StatusForbidden || s.site != "same-site" {
				t.Errorf("another origin's simple POST %s: %+v, want 403 (the browser says same-site)", uri, s)
			}
		}
		if len(rec.find("POST", uri, other.URL)) != 1 {
			t.Errorf("the browser did not send another origin's simple POST %s once", uri)
		}
	}
	if _, err := rt.Skill("planted-other"); err == nil {
		t.Errorf("another origin's page installed a skill")
	}

	// The allowed origin reads and runs through CORS; its text/plain run is refused (415).
	a := got["allowed"]
	if a.Read.Status != 200 || !a.Read.Listed || a.JSONRun.Status != 200 || string(a.JSONRun.Body.Result) != `{"from":"allowed"}` {
		t.Errorf("the allowed page: %+v %+v", a.Read, a.JSONRun)
	}
	if s := rec.find("POST", "/v1/skills/echo/runs?simple", allowed.URL); len(s) != 1 || s[0].status != http.StatusUnsupportedMediaType {
		t.Errorf("the allowed page's text/plain run: %+v", s)
	}
	if _, err := rt.Skill("planted-allowed"); err != nil {
		t.Errorf("the allowed page could not install: %v", err)
	}

	// The rebound page is same-origin with the API: only the Host gives it away. (Chromium sends
	// no Sec-Fetch-Site to a plain-http name like this one, only to trustworthy origins such as
	// loopback addresses; and it retries a 421 once, on a new connection.)
	b := got["rebound"]
	if b.Read.Status != http.StatusMisdirectedRequest || b.JSONRun.Status != http.StatusMisdirectedRequest {
		t.Errorf("the rebound page: %+v %+v", b.Read, b.JSONRun)
	}
	for _, uri := range []string{"/v1/skills/echo/runs?simple", "/v1/skills"} {
		sent := rec.find("POST", uri, rebound)
		if len(sent) == 0 {
			t.Errorf("the browser did not send the rebound page's POST %s", uri)
		}
		for _, s := range sent {
			if s.status != http.StatusMisdirectedRequest || !strings.HasPrefix(s.host, "evil.test:") {
				t.Errorf("the rebound page's simple POST %s: %+v", uri, s)
			}
		}
	}
	if _, err := rt.Skill("planted-rebound"); err == nil {
		t.Errorf("the rebound page installed a skill")
	}
}

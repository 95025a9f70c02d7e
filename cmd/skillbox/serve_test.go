package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// servingLine is what skillbox serve prints once it listens.
var servingLine = regexp.MustCompile(`skillbox: serving (\d+) skills on http://(\S+) \(keys: (\d+)\)`)

// serveProc is a running `skillbox serve`.
type serveProc struct {
	cmd  *exec.Cmd
	base string // http://ADDR
	mu   sync.Mutex
	log  strings.Builder // stderr so far
	done chan struct{}   // closed when the process has exited
	err  error           // its Wait error, once done
}

func (p *serveProc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// wait waits up to d for the process to exit and returns its exit code (-1 if it did not).
func (p *serveProc) wait(d time.Duration) int {
	select {
	case <-p.done:
	case <-time.After(d):
		return -1
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		return -2
	}
	return 0
}

// startServe starts bin with args. When listening is true it waits for the serving line and
// reads the address from it; otherwise it returns at once.
func startServe(t testing.TB, bin string, listening bool, args ...string) *serveProc {
	t.Helper()
	return startServeEnv(t, bin, nil, listening, args...)
}

// startServeEnv is startServe with extra environment variables ("NAME=value"). Its default
// store is t's own (see testDataDir), unless env sets SKILLBOX_DATA_DIR.
func startServeEnv(t testing.TB, bin string, env []string, listening bool, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--cache-dir", cacheDir}, args...)...)
	cmd.Env = append(append(os.Environ(), dataDirEnv+"="+testDataDir(t)), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[2]:
				default:
				}
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	if !listening {
		return p
	}
	select {
	case a := <-addr:
		p.base = "http://" + a
	case <-p.done:
		t.Fatalf("serve exited before listening:\n%s", p.stderr())
	case <-time.After(hangTimeout):
		t.Fatalf("serve did not listen within %v:\n%s", hangTimeout, p.stderr())
	}
	return p
}

// jsonType is the header a JSON body needs.
var jsonType = []string{"Content-Type", "application/json"}

// httpDo makes one request; header is name, value pairs ("Host" sets the request's Host).
func httpDo(t testing.TB, method, url, body string, header ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Header
}

// sseEvents reads a text/event-stream into (event name, data) pairs, calling onEvent for each as
// it arrives.
func sseEvents(t *testing.T, r io.Reader, onEvent func(name string, data map[string]any)) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				t.Errorf("event %s: data is not JSON: %q", name, line)
			}
			onEvent(name, data)
		}
	}
}

// postStream POSTs the JSON body to url asking for its events (text/event-stream); the caller
// closes the response.
func postStream(t *testing.T, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestServe builds the real binary once and runs `skillbox serve` as a user would.
func TestServe(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	// A second skills directory with two fixtures: sleepy (sleep.wasm, which runs until its
	// deadline) and quick.
	slow := t.TempDir()
	skillFixture(t, slow, "sleepy", manifest("sleepy", ""), "sleep")
	skillFixture(t, slow, "quick", manifest("quick", `"version":"1.2.3"`), "hello")

	t.Run("--watch logs what it reloaded", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		skillFixture(t, dir, "first", manifest("first", ""), "hello")
		p := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", dir, "--watch")
		// waitLog waits for a line of the log that holds every one of want.
		waitLog := func(want ...string) {
			t.Helper()
			deadline := time.Now().Add(hangTimeout)
			for time.Now().Before(deadline) {
				for _, line := range strings.Split(p.stderr(), "\n") {
					ok := true
					for _, w := range want {
						ok = ok && strings.Contains(line, w)
					}
					if ok {
						return
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Fatalf("no log line with %q within %v:\n%s", want, hangTimeout, p.stderr())
		}
		skillFixture(t, dir, "second", manifest("second", ""), "hello")
		waitLog("skills reloaded", "count=2", "added=second")
		writeFile(t, filepath.Join(dir, "second", "skill.json"), manifest("second", `"version":"2.0.0"`))
		waitLog("skills reloaded", "changed=second")
		writeFile(t, filepath.Join(dir, "first", "skill.json"), `{"id":"first",`)
		waitLog("skills reloaded", "changed=first")
		waitLog("skill is broken", "skill=first", "skill.json")
		if err := os.RemoveAll(filepath.Join(dir, "second")); err != nil {
			t.Fatal(err)
		}
		waitLog("skills reloaded", "count=1", "removed=second")
	})
	t.Run("--tools disclosure", func(t *testing.T) {
		t.Parallel()
		warm(bundledModules...) // serve checks every skill in the background
		p := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", bundled, "--tools", "disclosure")
		status, body, _ := httpDo(t, "GET", p.base+"/v1/tools", "")
		if status != 200 || strings.Contains(body, "skill_word_count") || !strings.Contains(body, `"name":"run_skill"`) {
			t.Errorf("GET /v1/tools: %d %s", status, body)
		}
		status, body, _ = httpDo(t, "POST", p.base+"/v1/tools/call", `{"name":"run_skill","arguments":{"skill":"word-count","args":{"text":"a b"}}}`, jsonType...)
		if status != 200 || !strings.Contains(body, `"is_error":false`) || !strings.Contains(body, `\"words\":2`) {
			t.Errorf("POST /v1/tools/call: %d %s", status, body)
		}
	})
	t.Run("loopback", func(t *testing.T) {
		t.Parallel()
		warm(bundledModules...) // serve checks every skill in the background
		p := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", bundled, "--skills", slow)
		// every bundled skill and the two of slow
		if m := servingLine.FindStringSubmatch(p.stderr()); m[1] != strconv.Itoa(len(bundledIDs(t))+2) || m[3] != "0" {
			t.Errorf("serving line %q", m[0])
		}
		status, body, _ := httpDo(t, "GET", p.base+"/v1/skills", "")
		if status != 200 || !strings.Contains(body, `"id":"word-count"`) || !strings.Contains(body, `"id":"sleepy"`) {
			t.Errorf("list: %d %s", status, body)
		}
		status, body, _ = httpDo(t, "POST", p.base+"/v1/skills/word-count/runs", `{"args":{"text":"a b a"}}`, jsonType...)
		if status != 200 || !strings.Contains(body, `"words":3`) {
			t.Errorf("run: %d %s", status, body)
		}
		status, body, _ = httpDo(t, "POST", p.base+"/v1/runs", `{"skill":"quick"}`, jsonType...)
		if status != 200 || !strings.Contains(body, `"version":"1.2.3"`) {
			t.Errorf("POST /v1/runs: %d %s", status, body)
		}
		status, body, _ = httpDo(t, "POST", p.base+"/v1/skills/word-count/runs", `{"args":{}}`, jsonType...)
		if status != 422 || !strings.Contains(body, `"invalid_args"`) {
			t.Errorf("invalid: %d %s", status, body)
		}
		// What a web page in the operator's browser could send is refused.
		browser := []struct {
			name   string
			header []string
			status int
			msg    string
		}{
			{"text/plain", []string{"Content-Type", "text/plain"}, 415, "curl --json"},
			{"cross-site", []string{"Content-Type", "application/json", "Origin", "https://evil.example"}, 403, "--cors-origin"},
			{"DNS rebinding", []string{"Content-Type", "application/json", "Host", "evil.example"}, 421, "--keys"},
		}
		for _, b := range browser {
			if status, body, _ := httpDo(t, "POST", p.base+"/v1/skills/word-count/runs", `{"args":{"text":"a"}}`, b.header...); status != b.status || !strings.Contains(body, b.msg) {
				t.Errorf("%s: %d %s", b.name, status, body)
			}
		}
		// SSE of a quick run.
		resp := postStream(t, p.base+"/v1/skills/hello/runs", `{"args":{"name":"Ada"}}`)
		var names []string
		sseEvents(t, resp.Body, func(name string, data map[string]any) {
			if s, ok := data["status"].(string); ok {
				name += ":" + s
			}
			names = append(names, name)
		})
		resp.Body.Close()
		if resp.Header.Get("Content-Type") != "text/event-stream" || strings.Join(names, ",") != "status:started,status:running,log,result" {
			t.Errorf("SSE: %q %v", resp.Header.Get("Content-Type"), names)
		}
		for _, path := range []string{"/healthz", "/readyz", "/openapi.json", "/metrics", "/v1/tools?format=mcp", "/.well-known/skills.json"} {
			if status, body, _ := httpDo(t, "GET", p.base+path, ""); status != 200 {
				t.Errorf("%s: %d %s", path, status, body)
			}
		}
		// The access log is on stderr.
		if !strings.Contains(p.stderr(), "msg=request") || !strings.Contains(p.stderr(), "path=/v1/skills/word-count/runs") {
			t.Errorf("no access log:\n%s", p.stderr())
		}
	})

	t.Run("SIGTERM lets a streaming run finish", func(t *testing.T) {
		t.Parallel()
		// The run fetches from held, which answers only once the test has seen serve begin to
		// shut down: the run is in flight when SIGTERM is handled however slow the machine, and
		// it ends when the test lets it, not at a timer of its own.
		arrived, release := make(chan struct{}), make(chan struct{})
		var arrivedOnce, releaseOnce sync.Once
		let := func() { releaseOnce.Do(func() { close(release) }) }
		held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrivedOnce.Do(func() { close(arrived) })
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<html><head><title>let go</title></head></html>")
		}))
		t.Cleanup(held.Close)
		t.Cleanup(let) // before held.Close, which waits for its handlers
		// The http-get module under a manifest that asks for the loopback host, which the policy
		// grants.
		skills := t.TempDir()
		skillFixture(t, skills, "fetcher", manifest("fetcher", `"parameters":{"url":{"type":"string","required":true}},"permissions":{"network":["127.0.0.1"]}`), "")
		wasm, err := os.ReadFile(filepath.Join(bundled, "http-get", "execute.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(skills, "fetcher", "execute.wasm"), string(wasm))
		policy := filepath.Join(t.TempDir(), "policy.yaml")
		writeFile(t, policy, "network: [\"127.0.0.1\"]\nallowNetworks: [\"127.0.0.1/32\"]\n")
		warm("http-get")
		p := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", skills, "--policy", policy)
		resp := postStream(t, p.base+"/v1/skills/fetcher/runs", `{"args":{"url":"`+held.URL+`/"}}`)
		defer resp.Body.Close()
		var names []string
		var result map[string]any
		var signaled bool
		sseEvents(t, resp.Body, func(name string, data map[string]any) {
			names = append(names, name)
			if data["status"] == "running" && !signaled {
				signaled = true
				if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Error(err)
				}
				// Let the fetch answer once the run is in it and serve is shutting down.
				select {
				case <-arrived:
				case <-time.After(hangTimeout):
					t.Errorf("the run's fetch did not arrive within %v:\n%s", hangTimeout, p.stderr())
				}
				for deadline := time.Now().Add(hangTimeout); !strings.Contains(p.stderr(), "shutting down") && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
				let()
			}
			if name == "result" {
				result, _ = data["result"].(map[string]any)
			}
		})
		if !signaled {
			t.Fatalf("no running event: %v", names)
		}
		if result == nil {
			t.Fatalf("the stream ended without its result (events %v):\n%s", names, p.stderr())
		}
		if value, _ := result["result"].(map[string]any); result["success"] != true || value["title"] != "let go" {
			t.Errorf("result %v, want the fetch's page, answered after SIGTERM", result)
		}
		if code := p.wait(hangTimeout); code != 0 {
			t.Errorf("exit %d after SIGTERM, want 0:\n%s", code, p.stderr())
		}
		if !strings.Contains(p.stderr(), "shutting down") {
			t.Errorf("no shutdown message:\n%s", p.stderr())
		}
		// New connections are refused once it has exited.
		if _, err := http.Get(p.base + "/healthz"); err == nil {
			t.Errorf("still serving after exit")
		}
	})

	t.Run("SIGINT when idle", func(t *testing.T) {
		t.Parallel()
		p := startServe(t, bin, true, "serve", "--addr", "localhost:0", "--skills", slow)
		p.cmd.Process.Signal(syscall.SIGINT)
		if code := p.wait(hangTimeout); code != 0 {
			t.Errorf("exit %d after SIGINT:\n%s", code, p.stderr())
		}
	})

	t.Run("SIGTERM cuts what outlives --shutdown-timeout and exits 0", func(t *testing.T) {
		t.Parallel()
		p := startServe(t, bin, true, "serve", "--addr", "localhost:0", "--skills", slow, "--shutdown-timeout", "1s")
		// sleepy runs until its 30 s timeout: its stream outlives the shutdown's second.
		resp := postStream(t, p.base+"/v1/skills/sleepy/runs", `{"args":{}}`)
		defer resp.Body.Close()
		var signaled bool
		sseEvents(t, resp.Body, func(name string, data map[string]any) {
			if data["status"] == "running" && !signaled {
				signaled = true
				if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Error(err)
				}
			}
		})
		if !signaled {
			t.Fatalf("the run never said it was running:\n%s", p.stderr())
		}
		if code := p.wait(hangTimeout); code != 0 {
			t.Errorf("exit %d after SIGTERM with a run in flight, want 0:\n%s", code, p.stderr())
		}
		if !strings.Contains(p.stderr(), "closed the connections still open") {
			t.Errorf("serve did not say it cut the run's connection:\n%s", p.stderr())
		}
	})

	t.Run("--max-connections", func(t *testing.T) {
		t.Parallel()
		p := startServe(t, bin, true, "serve", "--addr", "localhost:0", "--skills", slow, "--max-connections", "1")
		addr := strings.TrimPrefix(p.base, "http://")
		held, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// The held connection is accepted once a request on it is answered.
		fmt.Fprintf(held, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
		if resp, err := http.ReadResponse(bufio.NewReader(held), nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("held connection: %v %v", resp, err)
		}
		// A second connection waits while the first is open (it may be queued by the kernel)...
		done := make(chan int, 1)
		go func() {
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Get(p.base + "/healthz")
			if err != nil {
				done <- -1
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		select {
		case code := <-done:
			t.Fatalf("a second connection was served (%d) while the only one allowed was open", code)
		case <-time.After(300 * time.Millisecond):
		}
		// ... and is served once the first closes.
		held.Close()
		select {
		case code := <-done:
			if code != 200 {
				t.Errorf("the waiting connection got %d", code)
			}
		case <-time.After(hangTimeout):
			t.Fatalf("the waiting connection was not served after the first closed:\n%s", p.stderr())
		}
	})

	refusals := []struct {
		name string
		args []string // given
		code int      // expect
		msg  string
	}{
		{"all interfaces without keys", []string{"serve", "--addr", "0.0.0.0:0"}, 2, "refusing to serve 0.0.0.0:0 without API keys"},
		{"empty host without keys", []string{"serve", "--addr", ":0"}, 2, "refusing to serve"},
		{"IPv6 any without keys", []string{"serve", "--addr", "[::]:0"}, 2, "refusing to serve"},
		{"a positional argument", []string{"serve", "extra"}, 2, "serve takes no arguments"},
		{"missing keys file", []string{"serve", "--keys", "/nonexistent/keys.yaml"}, 2, "--keys"},
		{"bad address", []string{"serve", "--addr", "127.0.0.1:notaport"}, 1, "notaport"},
		{"unknown flag", []string{"serve", "--port", "8080"}, 2, "port"},
		{"CORS wildcard", []string{"serve", "--cors-origin", "*"}, 2, `--cors-origin "*": wildcards are not allowed`},
		{"CORS origin with a path", []string{"serve", "--cors-origin", "http://localhost:3000", "--cors-origin", "http://localhost:3000/app"}, 2, `--cors-origin "http://localhost:3000/app": no user, path`},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startServe(t, bin, false, append(tc.args, "--skills", slow)...)
			code := p.wait(hangTimeout)
			if code != tc.code || !strings.Contains(p.stderr(), tc.msg) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.msg, p.stderr())
			}
			if servingLine.MatchString(p.stderr()) {
				t.Errorf("it served")
			}
		})
	}

	t.Run("all interfaces with --insecure", func(t *testing.T) {
		t.Parallel()
		p := startServe(t, bin, true, "serve", "--addr", "0.0.0.0:0", "--insecure", "--skills", slow)
		port := p.base[strings.LastIndex(p.base, ":")+1:]
		if status, body, _ := httpDo(t, "POST", "http://127.0.0.1:"+port+"/v1/runs", `{"skill":"quick"}`, jsonType...); status != 200 {
			t.Errorf("run: %d %s", status, body)
		}
		// Without keys, a request addressed to another name is refused even here.
		if status, body, _ := httpDo(t, "GET", "http://127.0.0.1:"+port+"/v1/skills", "", "Host", "192.0.2.1:"+port); status != 421 || !strings.Contains(body, "--keys") {
			t.Errorf("non-loopback Host without keys: %d %s", status, body)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(hangTimeout); code != 0 {
			t.Errorf("exit %d:\n%s", code, p.stderr())
		}
	})

	t.Run("--cors-origin", func(t *testing.T) {
		t.Parallel()
		p := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", slow, "--cors-origin", "http://localhost:3000", "--cors-origin", "HTTPS://App.Example:443")
		for _, origin := range []string{"http://localhost:3000", "https://app.example"} {
			status, _, h := httpDo(t, "OPTIONS", p.base+"/v1/runs", "", "Origin", origin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
			if status != 204 || h.Get("Access-Control-Allow-Origin") != origin || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
				t.Errorf("preflight from %s: %d %v", origin, status, h)
			}
			status, body, h := httpDo(t, "POST", p.base+"/v1/runs", `{"skill":"quick"}`, "Content-Type", "application/json", "Origin", origin, "Sec-Fetch-Site", "cross-site")
			if status != 200 || h.Get("Access-Control-Allow-Origin") != origin {
				t.Errorf("run from %s: %d %s %v", origin, status, body, h)
			}
		}
		status, _, h := httpDo(t, "OPTIONS", p.base+"/v1/runs", "", "Origin", "http://localhost:3001", "Access-Control-Request-Method", "POST")
		if h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from another origin: %d %v", status, h)
		}
		if status, body, _ := httpDo(t, "POST", p.base+"/v1/runs", `{"skill":"quick"}`, "Content-Type", "application/json", "Origin", "http://localhost:3001"); status != 403 {
			t.Errorf("run from another origin: %d %s", status, body)
		}
	})

	t.Run("all interfaces with keys", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		keys := filepath.Join(dir, "keys.yaml")
		writeFile(t, keys, "- name: ops\n  key: env:SKILLBOX_SERVE_TEST_KEY\n  role: admin\n- name: bot\n  key: bot-key-0123456789abcdef\n  role: viewer\n")
		p := startServeEnv(t, bin, []string{"SKILLBOX_SERVE_TEST_KEY=ops-key-from-the-env-0123"}, true,
			"serve", "--addr", "0.0.0.0:0", "--keys", keys, "--skills", slow)
		port := p.base[strings.LastIndex(p.base, ":")+1:]
		base := "http://127.0.0.1:" + port
		if m := servingLine.FindStringSubmatch(p.stderr()); m[3] != "2" {
			t.Errorf("serving line %q", m[0])
		}
		if status, _, h := httpDo(t, "GET", base+"/v1/skills", ""); status != 401 || h.Get("WWW-Authenticate") == "" {
			t.Errorf("no key: %d", status)
		}
		if status, body, _ := httpDo(t, "POST", base+"/v1/reload", "", "Authorization", "Bearer ops-key-from-the-env-0123"); status != 200 {
			t.Errorf("admin: %d %s", status, body)
		}
		if status, body, _ := httpDo(t, "GET", base+"/v1/skills", "", "Host", "skills.example.com", "X-API-Key", "bot-key-0123456789abcdef"); status != 200 {
			t.Errorf("with keys, any Host is served: %d %s", status, body)
		}
		if status, _, _ := httpDo(t, "POST", base+"/v1/reload", "", "X-API-Key", "bot-key-0123456789abcdef"); status != 403 {
			t.Errorf("viewer reload: %d", status)
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(hangTimeout); code != 0 {
			t.Errorf("exit %d:\n%s", code, p.stderr())
		}
		if strings.Contains(p.stderr(), "ops-key-from-the-env") || strings.Contains(p.stderr(), "bot-key-0123") {
			t.Errorf("stderr shows a key:\n%s", p.stderr())
		}
	})
}

// serve --tenants: each tenant's key sees its own skills and runs, uploads land in its own
// directory, a key of no tenant sees the server's skills, and a quota past its bound is 429.
func TestServeTenants(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	skillFixture(t, shared, "common", manifest("common", ""), "hello")
	skillFixture(t, filepath.Join(dir, "acme"), "acme-only", manifest("acme-only", ""), "hello")
	writeFile(t, filepath.Join(dir, "tenants.yaml"), "- name: acme\n  skills: ./acme\n  shared: true\n  quota: {runsPerMinute: 2}\n- name: globex\n  skills: ./globex\n")
	writeFile(t, filepath.Join(dir, "keys.yaml"), "- {name: op, key: operator-key-0123456789, role: admin}\n"+
		"- {name: acme-admin, key: acme-key-0123456789, role: admin, tenant: acme, user: alice}\n"+
		"- {name: globex-admin, key: globex-key-0123456789, role: admin, tenant: globex, user: bob}\n")
	p := startServe(t, bin, true, "serve", "--addr", "127.0.0.1:0", "--skills", shared, "--keys", filepath.Join(dir, "keys.yaml"),
		"--tenants", filepath.Join(dir, "tenants.yaml"), "--data-dir", filepath.Join(dir, "data"))
	list := func(key string) string {
		_, body, _ := httpDo(t, "GET", p.base+"/v1/skills", "", "X-API-Key", key)
		return body
	}
	if b := list("acme-key-0123456789"); !strings.Contains(b, `"acme-only"`) || !strings.Contains(b, `"common"`) {
		t.Errorf("acme's skills: %s", b)
	}
	if b := list("globex-key-0123456789"); strings.Contains(b, `"acme-only"`) || strings.Contains(b, `"common"`) {
		t.Errorf("globex sees another's skills: %s", b)
	}
	if b := list("operator-key-0123456789"); strings.Contains(b, `"acme-only"`) || !strings.Contains(b, `"common"`) {
		t.Errorf("the default tenant's skills: %s", b)
	}
	for i := range 3 {
		code, body, h := httpDo(t, "POST", p.base+"/v1/skills/acme-only/runs", `{"args":{}}`, "X-API-Key", "acme-key-0123456789", "Content-Type", "application/json")
		switch {
		case i < 2 && code != 200:
			t.Fatalf("acme's run %d: %d %s", i+1, code, body)
		case i == 2 && (code != 429 || !strings.Contains(body, "quota_exceeded") || h.Get("Retry-After") == ""):
			t.Fatalf("acme's third run in a minute: %d %s", code, body)
		}
	}
	_, runs, _ := httpDo(t, "GET", p.base+"/v1/runs", "", "X-API-Key", "acme-key-0123456789")
	if strings.Count(runs, `"run_id"`) != 2 || !strings.Contains(runs, `"caller":"alice"`) || !strings.Contains(runs, `"tenant":"acme"`) {
		t.Errorf("acme's history: %s", runs)
	}
	if _, runs, _ := httpDo(t, "GET", p.base+"/v1/runs", "", "X-API-Key", "globex-key-0123456789"); strings.Contains(runs, `"run_id"`) {
		t.Errorf("globex sees runs: %s", runs)
	}
	// An upload by globex lands in globex's directory, made by serve.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	wasm, err := os.ReadFile(filepath.Join(dir, "acme", "acme-only", "execute.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"skill.json": []byte(manifest("ledger", "")), "execute.wasm": wasm} {
		fw, _ := mw.CreateFormFile(name, name)
		fw.Write(data)
	}
	mw.Close()
	if code, b, _ := httpDo(t, "POST", p.base+"/v1/skills", body.String(), "X-API-Key", "globex-key-0123456789", "Content-Type", mw.FormDataContentType()); code != 201 {
		t.Fatalf("globex's upload: %d %s", code, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "globex", "ledger", "skill.json")); err != nil {
		t.Errorf("globex's upload is not in its directory: %v", err)
	}
	if b := list("acme-key-0123456789"); strings.Contains(b, `"ledger"`) {
		t.Errorf("acme sees globex's upload: %s", b)
	}
}

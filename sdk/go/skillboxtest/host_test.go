package skillboxtest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	skill "github.com/skillbox-dev/skillbox/sdk/go"
	"github.com/skillbox-dev/skillbox/sdk/go/skillboxtest"
)

// wantErr checks that err carries status (nil for success) and reads exactly text.
func wantErr(t *testing.T, what string, err error, status error, text string) {
	t.Helper()
	if status == nil {
		if err != nil {
			t.Errorf("%s: %v, want success", what, err)
		}
		return
	}
	if !errors.Is(err, status) || err.Error() != text {
		t.Errorf("%s:\n got %v\nwant %v: %s", what, err, status, text)
	}
}

func TestFetch(t *testing.T) {
	t.Parallel()
	h := skillboxtest.New(
		skillboxtest.Route("GET", "https://api.example.com/v1/x?q=1", skillboxtest.JSON(200, map[string]int{"n": 1})),
		skillboxtest.Route("post", "https://api.example.com/v1/echo", func(req skill.Request) (*skill.Response, error) {
			return &skill.Response{Status: 201, Headers: map[string]string{"X-Echo": req.Headers["X-Test"]}, Body: req.Body}, nil
		}),
		skillboxtest.Route("GET", "https://api.example.com/down", skillboxtest.Fail(skill.Failed, "https://api.example.com/down: connection refused")),
		skillboxtest.Route("GET", "https://api.example.com/broken", func(skill.Request) (*skill.Response, error) { return nil, errors.New("EOF") }),
		skillboxtest.Route("GET", "https://api.example.com/big", skillboxtest.Text(200, strings.Repeat("x", 11))),
		skillboxtest.Route("HEAD", "https://api.example.com/big", skillboxtest.Text(200, strings.Repeat("x", 11))),
		skillboxtest.WithLimits(skillboxtest.Limits{MaxFetchBytes: 10}),
	)
	ctx := h.Context()

	resp, err := ctx.Get("https://api.example.com/v1/x?q=1")
	var v struct{ N int }
	if err != nil || resp.JSON(&v) != nil || v.N != 1 || resp.Status != 200 || resp.URL != "https://api.example.com/v1/x?q=1" || resp.Headers["content-type"] != "application/json" {
		t.Fatalf("GET: %+v %v", resp, err)
	}
	resp, err = ctx.Fetch(skill.Request{Method: "POST", URL: "https://api.example.com/v1/echo", Headers: map[string]string{"X-Test": "1"}, Body: []byte("ping")})
	if err != nil || resp.Status != 201 || resp.Text() != "ping" || resp.Headers["x-echo"] != "1" {
		t.Fatalf("POST: %+v %v", resp, err)
	}
	if resp, err := ctx.Fetch(skill.Request{Method: "HEAD", URL: "https://api.example.com/big"}); err != nil || len(resp.Body) != 0 {
		t.Errorf("HEAD: %+v %v", resp, err)
	}

	tests := []struct {
		name   string
		req    skill.Request
		status error
		text   string
	}{
		{"off the grant", skill.Request{URL: "https://evil.example/"}, skill.ErrDenied,
			"fetch: denied: https://evil.example/: host evil.example is not on the grant (granted: api.example.com)"},
		{"granted host, no route", skill.Request{URL: "https://api.example.com/other"}, skill.ErrFailed,
			"fetch: failed: https://api.example.com/other: no answer scripted for GET https://api.example.com/other (add a skillboxtest.Route)"},
		{"route method differs", skill.Request{Method: "DELETE", URL: "https://api.example.com/v1/x?q=1"}, skill.ErrFailed,
			"fetch: failed: https://api.example.com/v1/x?q=1: no answer scripted for DELETE https://api.example.com/v1/x?q=1 (add a skillboxtest.Route)"},
		{"scripted failure", skill.Request{URL: "https://api.example.com/down"}, skill.ErrFailed,
			"fetch: failed: https://api.example.com/down: connection refused"},
		{"responder error", skill.Request{URL: "https://api.example.com/broken"}, skill.ErrFailed,
			"fetch: failed: https://api.example.com/broken: EOF"},
		{"response too big", skill.Request{URL: "https://api.example.com/big"}, skill.ErrLimit,
			"fetch: limit: https://api.example.com/big: response is more than maxFetchBytes (10)"},
		{"body too big", skill.Request{Method: "POST", URL: "https://api.example.com/v1/echo", Body: []byte("12345678901")}, skill.ErrInvalid,
			"fetch: invalid: fetch: a request body of 11 bytes is more than maxFetchBytes (10)"},
		{"bad method", skill.Request{Method: "TRACE", URL: "https://api.example.com/v1/echo"}, skill.ErrInvalid,
			`fetch: invalid: method "TRACE" is not one of GET HEAD POST PUT PATCH DELETE OPTIONS`},
		{"bad scheme", skill.Request{URL: "file:///etc/passwd"}, skill.ErrInvalid,
			"fetch: invalid: file:///etc/passwd: only http and https URLs are allowed"},
		{"user info", skill.Request{URL: "https://u:p@api.example.com/"}, skill.ErrInvalid,
			"fetch: invalid: URLs with user info are not allowed; use a header"},
		{"reserved header", skill.Request{URL: "https://api.example.com/v1/x?q=1", Headers: map[string]string{"Host": "evil"}}, skill.ErrInvalid,
			`fetch: invalid: header "Host" is set by the host, not the skill`},
	}
	for _, tc := range tests {
		_, err := ctx.Fetch(tc.req)
		wantErr(t, tc.name, err, tc.status, tc.text)
	}
	if got := h.Denied(); !reflect.DeepEqual(got, []string{"fetch https://evil.example/: host evil.example is not on the grant"}) {
		t.Errorf("denied %q", got)
	}
	if n := len(h.Requests()); n != 3+len(tests) {
		t.Errorf("%d requests recorded, want %d", n, 3+len(tests))
	}
}

func TestFetchNoNetwork(t *testing.T) {
	t.Parallel()
	_, err := skillboxtest.New().Context().Get("https://api.example.com/")
	wantErr(t, "no routes", err, skill.ErrDenied, "fetch: denied: https://api.example.com/: host api.example.com is not on the grant (this run has no network access)")
}

func TestFetchLimitAndFallback(t *testing.T) {
	t.Parallel()
	h := skillboxtest.New(
		skillboxtest.FetchFunc(func(req skill.Request) (*skill.Response, error) {
			return &skill.Response{Body: []byte(req.Method + " " + req.URL)}, nil
		}),
		skillboxtest.WithLimits(skillboxtest.Limits{MaxFetches: 2}),
	)
	ctx := h.Context()
	for i := range 2 {
		resp, err := ctx.Get(fmt.Sprintf("http://any%d.example:8080/", i))
		if err != nil || resp.Status != 200 || resp.Text() != fmt.Sprintf("GET http://any%d.example:8080/", i) {
			t.Fatalf("fetch %d: %+v %v", i, resp, err)
		}
	}
	_, err := ctx.Get("http://any.example/")
	wantErr(t, "third fetch", err, skill.ErrLimit, "fetch: limit: the run's maxFetches (2) is used up")
	// A malformed request spends no quota, but is refused for what it is.
	_, err = ctx.Get("ftp://any.example/")
	wantErr(t, "malformed", err, skill.ErrInvalid, "fetch: invalid: ftp://any.example/: only http and https URLs are allowed")
}

func TestEnv(t *testing.T) {
	t.Parallel()
	h := skillboxtest.New(skillboxtest.Env("LANG", "en_US"), skillboxtest.Env("EMPTY", ""))
	ctx := h.Context()
	if v, ok := ctx.Env("LANG"); !ok || v != "en_US" {
		t.Errorf("LANG: (%q, %v)", v, ok)
	}
	if v, ok := ctx.Env("EMPTY"); !ok || v != "" {
		t.Errorf("EMPTY: (%q, %v), want set and empty", v, ok)
	}
	if v, ok := ctx.Env("HOME"); ok || v != "" {
		t.Errorf("HOME: (%q, %v), want unset", v, ok)
	}
	if got := h.Denied(); !reflect.DeepEqual(got, []string{"env HOME: not granted"}) {
		t.Errorf("denied %q", got)
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	h := skillboxtest.New(
		skillboxtest.Mount("/workspace/", skillboxtest.ReadWrite),
		skillboxtest.Mount("/data", skillboxtest.ReadOnly),
		skillboxtest.File("/data/ro.txt", "read only"),
		skillboxtest.File("/data/big.txt", "0123456789a"),
		skillboxtest.File("/skill/prompt.md", "own file"),
		skillboxtest.WithLimits(skillboxtest.Limits{MaxFileBytes: 10, MaxWriteBytes: 20}),
	)
	ctx := h.Context()
	for p, want := range map[string]string{"/data/ro.txt": "read only", "/skill/prompt.md": "own file"} {
		if b, err := ctx.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("read %s: (%q, %v)", p, b, err)
		}
	}
	wantErr(t, "write", ctx.WriteFile("/workspace/out/a.txt", []byte("hello")), nil, "")
	if b, err := ctx.ReadFile("/workspace/out/a.txt"); err != nil || string(b) != "hello" {
		t.Errorf("read back: (%q, %v)", b, err)
	}

	reads := []struct {
		name, path string
		status     error
		text       string
	}{
		{"missing", "/workspace/nope.txt", skill.ErrNotFound, "read_file: not found: /workspace/nope.txt: no such file"},
		{"outside", "/etc/passwd", skill.ErrDenied, `read_file: denied: path "/etc/passwd" is outside the granted mounts (/skill, /workspace, /data)`},
		{"dot-dot", "/workspace/../etc/passwd", skill.ErrInvalid, `read_file: invalid: path "/workspace/../etc/passwd" must be clean: no '..', '.' or empty segments`},
		{"relative", "a.txt", skill.ErrInvalid, `read_file: invalid: path "a.txt" must be absolute, such as /workspace/file.txt`},
		{"a directory", "/workspace/out", skill.ErrInvalid, "read_file: invalid: /workspace/out: not a regular file"},
		{"a mount", "/workspace", skill.ErrInvalid, `read_file: invalid: path "/workspace" is a mount's directory, not a file`},
		{"too big", "/data/big.txt", skill.ErrLimit, "read_file: limit: /data/big.txt: 11 bytes is more than maxFileBytes (10)"},
		{"too deep", "/workspace" + strings.Repeat("/d", 32), skill.ErrInvalid, `read_file: invalid: path "/workspace` + strings.Repeat("/d", 32) + `" is deeper than 32 segments`},
	}
	for _, tc := range reads {
		_, err := ctx.ReadFile(tc.path)
		wantErr(t, "read "+tc.name, err, tc.status, tc.text)
	}
	writes := []struct {
		name, path, data string
		status           error
		text             string
	}{
		{"read-only mount", "/data/ro.txt", "x", skill.ErrDenied, "write_file: denied: /data/ro.txt: mount /data is read-only"},
		{"own directory", "/skill/prompt.md", "x", skill.ErrDenied, "write_file: denied: /skill/prompt.md: mount /skill is read-only"},
		{"outside", "/tmp/x", "x", skill.ErrDenied, `write_file: denied: path "/tmp/x" is outside the granted mounts (/skill, /workspace, /data)`},
		{"over quota", "/workspace/b.txt", strings.Repeat("x", 16), skill.ErrLimit, "write_file: limit: /workspace/b.txt: 16 more bytes would pass maxWriteBytes (20)"},
		{"onto a directory", "/workspace/out", "x", skill.ErrFailed, "write_file: failed: /workspace/out: is a directory"},
		{"under a file", "/workspace/out/a.txt/b", "x", skill.ErrFailed, "write_file: failed: /workspace/out/a.txt/b: not a directory"},
	}
	for _, tc := range writes {
		wantErr(t, "write "+tc.name, ctx.WriteFile(tc.path, []byte(tc.data)), tc.status, tc.text)
	}
	if _, ok := h.File("/data/ro.txt"); !ok {
		t.Error("a refused write removed the file")
	}
	if got := h.Files(); !reflect.DeepEqual(got, []string{"/data/big.txt", "/data/ro.txt", "/skill/prompt.md", "/workspace/out/a.txt"}) {
		t.Errorf("files %q", got)
	}
	want := []string{"file /etc/passwd: outside the granted mounts", "write /data/ro.txt: mount /data is read-only",
		"write /skill/prompt.md: mount /skill is read-only", "file /tmp/x: outside the granted mounts"}
	if got := h.Denied(); !reflect.DeepEqual(got, want) {
		t.Errorf("denied %q\nwant %q", got, want)
	}
}

func TestWriteCount(t *testing.T) {
	t.Parallel()
	ctx := skillboxtest.New(skillboxtest.Mount("/w", skillboxtest.ReadWrite)).Context()
	for i := range 256 {
		if err := ctx.WriteFile(fmt.Sprintf("/w/%d", i), nil); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	wantErr(t, "write 257", ctx.WriteFile("/w/last", nil), skill.ErrLimit, "write_file: limit: /w/last: a run may write at most 256 files")
}

func TestFileOutsideMounts(t *testing.T) {
	t.Parallel()
	defer func() {
		if p := fmt.Sprint(recover()); !strings.Contains(p, `skillboxtest.File("/workspace/a.md"): path "/workspace/a.md" is outside the granted mounts (/skill); add a skillboxtest.Mount`) {
			t.Errorf("panic %q", p)
		}
	}()
	skillboxtest.New(skillboxtest.File("/workspace/a.md", "x"))
}

func TestLogs(t *testing.T) {
	t.Parallel()
	h := skillboxtest.New(skillboxtest.WithLimits(skillboxtest.Limits{MaxLogBytes: 3*64 + 7}))
	ctx := h.Context()
	ctx.Debugf("d%d", 0)
	ctx.Warnf("w%d", 2)
	ctx.Log(skill.Level(9), "odd")
	ctx.Errorf("dropped")
	got := fmt.Sprint(h.Logs())
	if got != "[debug: d0 warn: w2 info: odd]" || h.DroppedLogs() != 1 {
		t.Errorf("logs %s, dropped %d", got, h.DroppedLogs())
	}
}

type greetArgs struct {
	Name string `json:"name"`
}

func greet(ctx *skill.Context, a greetArgs) (map[string]string, error) {
	switch a.Name {
	case "":
		return nil, errors.New("name is empty")
	case "panic":
		panic("boom")
	}
	ctx.Infof("greeting %s", a.Name)
	return map[string]string{"greeting": "Hello, " + a.Name + "!"}, nil
}

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args any
		want skillboxtest.Result
	}{
		{"struct", greetArgs{"Ada"}, skillboxtest.Result{Success: true, Result: json.RawMessage(`{"greeting":"Hello, Ada!"}`)}},
		{"map", map[string]any{"name": "Ada"}, skillboxtest.Result{Success: true, Result: json.RawMessage(`{"greeting":"Hello, Ada!"}`)}},
		{"raw JSON", json.RawMessage(`{"name":"Bo"}`), skillboxtest.Result{Success: true, Result: json.RawMessage(`{"greeting":"Hello, Bo!"}`)}},
		{"bytes", []byte(`{"name":"Cy"}`), skillboxtest.Result{Success: true, Result: json.RawMessage(`{"greeting":"Hello, Cy!"}`)}},
		{"nil is {}", nil, skillboxtest.Result{Error: "name is empty"}},
		{"handler error", greetArgs{}, skillboxtest.Result{Error: "name is empty"}},
		{"panic", greetArgs{"panic"}, skillboxtest.Result{Error: "panic: boom"}},
		{"wrong type", map[string]int{"name": 1}, skillboxtest.Result{Error: "decode arguments: json: cannot unmarshal number into Go struct field greetArgs.name of type string"}},
	}
	for _, tc := range tests {
		if got := skillboxtest.Run(skillboxtest.New(), greet, tc.args); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v (%s)\nwant %+v (%s)", tc.name, got, got.Result, tc.want, tc.want.Result)
		}
	}
}

func TestResultDecode(t *testing.T) {
	t.Parallel()
	h := skillboxtest.New()
	var out struct{ Greeting string }
	if err := skillboxtest.Run(h, greet, greetArgs{"Ada"}).Decode(&out); err != nil || out.Greeting != "Hello, Ada!" {
		t.Errorf("decode: %+v %v", out, err)
	}
	if err := skillboxtest.Run(h, greet, greetArgs{}).Decode(&out); err == nil || err.Error() != "skill failed: name is empty" {
		t.Errorf("decode of a failure: %v", err)
	}
	if got := fmt.Sprint(h.Logs()); got != "[info: greeting Ada]" {
		t.Errorf("logs %s", got)
	}
}

// The result goes through JSON as in a real run: what does not encode fails the run, and
// the test sees the result's JSON form, not the Go value.
func TestRunResultWireFormat(t *testing.T) {
	t.Parallel()
	res := skillboxtest.Run(skillboxtest.New(), func(*skill.Context, struct{}) (any, error) {
		return map[string]any{"ch": make(chan int)}, nil
	}, nil)
	if res.Success || res.Error != "encode result: json: unsupported type: chan int" {
		t.Errorf("unencodable: %+v", res)
	}
	res = skillboxtest.Run(skillboxtest.New(), func(*skill.Context, struct{}) (struct {
		Hidden int
		Shown  int `json:"shown"`
		hidden int
	}, error) {
		return struct {
			Hidden int
			Shown  int `json:"shown"`
			hidden int
		}{1, 2, 3}, nil
	}, nil)
	if string(res.Result) != `{"Hidden":1,"shown":2}` {
		t.Errorf("result %s", res.Result)
	}
}

// Each Run is a new run: quotas start again, files stay.
func TestRunFreshQuotas(t *testing.T) {
	t.Parallel()
	h := skillboxtest.New(
		skillboxtest.Mount("/w", skillboxtest.ReadWrite),
		skillboxtest.Route("GET", "https://a.example/", skillboxtest.Text(200, "ok")),
		skillboxtest.WithLimits(skillboxtest.Limits{MaxFetches: 1, MaxWriteBytes: 4}),
	)
	call := func(ctx *skill.Context, a struct{ N int }) (int, error) {
		if _, err := ctx.Get("https://a.example/"); err != nil {
			return 0, err
		}
		return a.N, ctx.WriteFile(fmt.Sprintf("/w/%d", a.N), []byte("1234"))
	}
	for n := range 3 {
		if res := skillboxtest.Run(h, call, map[string]int{"N": n}); !res.Success {
			t.Fatalf("run %d: %+v", n, res)
		}
	}
	if got := h.Files(); len(got) != 3 {
		t.Errorf("files %q", got)
	}
	// Within one run the quota holds: the Context shares the last run's counters.
	if _, err := h.Context().Get("https://a.example/"); !errors.Is(err, skill.ErrLimit) {
		t.Errorf("second fetch of a run: %v", err)
	}
}

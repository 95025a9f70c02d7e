package skill

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fakeHost answers host calls from a table and records them as a call trace, the way
// wazero tests its host functions.
type fakeHost struct {
	in      []byte
	out     []byte
	replies map[string][]byte // by call name
	trace   []string
}

func (f *fakeHost) Input() []byte   { return f.in }
func (f *fakeHost) Output(b []byte) { f.out = b }

func (f *fakeHost) answer(call string, args ...[]byte) []byte {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = fmt.Sprintf("%q", a)
	}
	f.trace = append(f.trace, call+"("+strings.Join(parts, ", ")+")")
	return f.replies[call]
}

func (f *fakeHost) Fetch(request, body []byte) []byte { return f.answer("fetch", request, body) }
func (f *fakeHost) Env(name []byte) []byte            { return f.answer("env", name) }
func (f *fakeHost) ReadFile(path []byte) []byte       { return f.answer("read_file", path) }
func (f *fakeHost) WriteFile(path, data []byte) []byte {
	return f.answer("write_file", path, data)
}
func (f *fakeHost) Log(level int32, msg []byte) { f.answer(fmt.Sprintf("log[%d]", level), msg) }

func (f *fakeHost) wantTrace(t *testing.T, want ...string) {
	t.Helper()
	if strings.Join(f.trace, "\n") != strings.Join(want, "\n") {
		t.Fatalf("trace:\n%s\nwant:\n%s", strings.Join(f.trace, "\n"), strings.Join(want, "\n"))
	}
}

func TestContextFetch(t *testing.T) {
	f := &fakeHost{replies: map[string][]byte{
		"fetch": append([]byte{0}, fetchPayload(`{"status":200,"url":"https://example.com/","headers":{"x-echo":"ping"}}`, []byte(`{"n":1}`))...),
	}}
	ctx := &Context{host: f}
	resp, err := ctx.Fetch(Request{Method: "POST", URL: "https://example.com/", Headers: map[string]string{"X-Test": "1"}, Body: []byte("ping")})
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ N int }
	if err := resp.JSON(&v); err != nil || v.N != 1 || resp.Text() != `{"n":1}` || resp.Headers["x-echo"] != "ping" {
		t.Fatalf("got %+v (%v), %+v", resp, err, v)
	}
	if _, err := ctx.Get("https://example.com/x"); err != nil {
		t.Fatal(err)
	}
	f.wantTrace(t,
		`fetch("{\"method\":\"POST\",\"url\":\"https://example.com/\",\"headers\":{\"X-Test\":\"1\"}}", "ping")`,
		`fetch("{\"method\":\"GET\",\"url\":\"https://example.com/x\"}", "")`,
	)
}

func TestContextFetchDenied(t *testing.T) {
	f := &fakeHost{replies: map[string][]byte{"fetch": []byte("\x02host \"x\" is not on the grant")}}
	_, err := (&Context{host: f}).Get("https://x/")
	if !errors.Is(err, ErrDenied) || err.Error() != `fetch: denied: host "x" is not on the grant` {
		t.Fatalf("got %v", err)
	}
	if wrapped := fmt.Errorf("load page: %w", err); !errors.Is(wrapped, ErrDenied) {
		t.Fatalf("wrapped error lost its status: %v", wrapped)
	}
}

func TestContextEnv(t *testing.T) {
	f := &fakeHost{replies: map[string][]byte{"env": []byte("\x00en_US")}}
	ctx := &Context{host: f}
	if v, ok := ctx.Env("LANG"); !ok || v != "en_US" {
		t.Fatalf("got (%q, %v)", v, ok)
	}
	f.replies["env"] = []byte("\x01")
	if v, ok := ctx.Env("SECRET"); ok || v != "" {
		t.Fatalf("got (%q, %v), want unset", v, ok)
	}
	f.wantTrace(t, `env("LANG")`, `env("SECRET")`)
}

func TestContextFiles(t *testing.T) {
	f := &fakeHost{replies: map[string][]byte{"read_file": []byte("\x00hello"), "write_file": {0}}}
	ctx := &Context{host: f}
	if b, err := ctx.ReadFile("/workspace/a.md"); err != nil || string(b) != "hello" {
		t.Fatalf("got (%q, %v)", b, err)
	}
	if err := ctx.WriteFile("/workspace/b.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	f.replies["read_file"] = []byte("\x01/workspace/c.md does not exist")
	if _, err := ctx.ReadFile("/workspace/c.md"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v", err)
	}
	f.replies["write_file"] = []byte("\x02read-only mount")
	if err := ctx.WriteFile("/skill/x", nil); !errors.Is(err, ErrDenied) || err.Error() != "write_file: denied: read-only mount" {
		t.Fatalf("got %v", err)
	}
	f.wantTrace(t,
		`read_file("/workspace/a.md")`,
		`write_file("/workspace/b.md", "x")`,
		`read_file("/workspace/c.md")`,
		`write_file("/skill/x", "")`,
	)
}

func TestContextLog(t *testing.T) {
	f := &fakeHost{}
	ctx := &Context{host: f}
	ctx.Debugf("d%d", 0)
	ctx.Infof("i%d", 1)
	ctx.Warnf("w%d", 2)
	ctx.Errorf("e%d", 3)
	ctx.Log(LevelInfo, "plain")
	f.wantTrace(t, `log[0]("d0")`, `log[1]("i1")`, `log[2]("w2")`, `log[3]("e3")`, `log[1]("plain")`)
}

// TestNoHost checks that the native build answers FAILED instead of crashing, so code
// that merely links the SDK can be tested natively.
func TestNoHost(t *testing.T) {
	var ctx Context
	if _, err := ctx.Get("https://example.com/"); !errors.Is(err, ErrFailed) {
		t.Fatalf("got %v", err)
	}
	if _, ok := ctx.Env("X"); ok {
		t.Fatal("env found without a host")
	}
	ctx.Infof("dropped")
}

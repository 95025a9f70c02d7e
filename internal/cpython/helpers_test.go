package cpython

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/hostfuncs/netguard"
	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/skillbox-dev/skillbox/internal/testcache"
)

var (
	compiledMu sync.Mutex
	compiled   = map[uint32]*Compiled{}
)

// compiledFor returns the interpreter compiled under a memory cap of pages (shared by the
// tests), with the engine configuration the runtime uses for a module wazero must interrupt.
func compiledFor(t testing.TB, pages uint32) *Compiled {
	t.Helper()
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if c := compiled[pages]; c != nil {
		return c
	}
	c, err := Compile(context.Background(), testConfig(t, pages))
	if err != nil {
		t.Fatal(err)
	}
	compiled[pages] = c
	return c
}

// testConfig is the engine configuration the runtime uses for a module wazero must interrupt,
// under a memory cap of pages, with the tests' shared compilation cache.
func testConfig(t testing.TB, pages uint32) wazero.RuntimeConfig {
	t.Helper()
	if err := os.MkdirAll(testcache.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	cache, err := wazero.NewCompilationCacheWithDir(testcache.Dir())
	if err != nil {
		t.Fatal(err)
	}
	return wazero.NewRuntimeConfig().WithCloseOnContextDone(true).WithMemoryLimitPages(pages).WithCompilationCache(cache)
}

// testHost serves the SkillContext from a real hostfuncs.Call, as the runtime will, and records
// the log lines. block, when set, makes Fetch wait for it (ignoring its context) first.
type testHost struct {
	call  *hostfuncs.Call
	block chan struct{}
	mu    sync.Mutex
	logs  []logLine
}

type logLine struct{ level, source, message string }

func newHost(t testing.TB, g *hostfuncs.Grant) *testHost {
	if g.Limits.MaxLogBytes == 0 {
		g.Limits.MaxLogBytes = 1 << 20
	}
	return &testHost{call: hostfuncs.NewCall(g)}
}

func loopbackGrant(t testing.TB, patterns ...string) *hostfuncs.Grant {
	var l netguard.List
	for _, s := range patterns {
		p, err := netguard.ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		l = append(l, p)
	}
	return &hostfuncs.Grant{Hosts: l, Guard: netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		Limits: hostfuncs.Limits{MaxFetches: 10, MaxFetchBytes: 1 << 20}}
}

func (h *testHost) Fetch(ctx context.Context, req hostfuncs.FetchRequest) (*hostfuncs.FetchResponse, error) {
	if h.block != nil {
		<-h.block
		return nil, errors.New("unblocked too late")
	}
	return h.call.Fetch(ctx, req)
}

func (h *testHost) Env(ctx context.Context, name string) (string, error) {
	return broker.CallHost{Call: h.call}.Env(ctx, name)
}

func (h *testHost) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return broker.CallHost{Call: h.call}.ReadFile(ctx, p)
}

func (h *testHost) WriteFile(ctx context.Context, p string, data []byte) error {
	return broker.CallHost{Call: h.call}.WriteFile(ctx, p, data)
}

func (h *testHost) Log(level, source, message string) {
	h.mu.Lock()
	h.logs = append(h.logs, logLine{level, source, message})
	h.mu.Unlock()
	h.call.Log(level, source, message)
}

func (h *testHost) lines() []logLine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]logLine(nil), h.logs...)
}

// skillDir writes files (name → content; names may hold slashes) into a new directory.
func skillDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runSkill runs execute.py (src) with args under the default test cap (64 MiB).
func runSkill(t testing.TB, ctx context.Context, h broker.Host, src, args string) (Result, error) {
	t.Helper()
	return Run(ctx, compiledFor(t, 1024), Program{Dir: skillDir(t, map[string]string{"execute.py": src}), Args: []byte(args)}, h)
}

// wantKind fails t unless err is an *Error of kind k, and returns it.
func wantKind(t testing.TB, err error, k Kind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *Error of kind %s", err, err, k)
	}
	if e.Kind != k {
		t.Fatalf("kind = %s, want %s (err: %v)", e.Kind, k, err)
	}
	return e
}

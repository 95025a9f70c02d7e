package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/mcpserver"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
)

// cacheDir is the compilation cache of every test, shared with the other packages' tests (and
// kept between runs): a Go-built module takes seconds to compile under -race.
var cacheDir = testcache.Dir()

// bundled is the repository's skills directory.
const bundled = "../skills"

// Protocol versions: the newest of the handshake era (what the TypeScript SDK speaks) and the
// stateless one the Go client prefers.
const (
	legacyProtocol = "2025-11-25"
	newProtocol    = "" // the client's latest
)

func TestMain(m *testing.M) {
	runtime.MaybeCompileChild() // compile modules in a child process: this test binary, run again
	// The first wazero.NewCompilationCacheWithDir of a process races with concurrent ones
	// (wazero#2532): make one before the parallel tests do.
	if sh, err := runtime.NewShared(context.Background(), runtime.SharedConfig{CacheDir: cacheDir}); err == nil {
		sh.Close(context.Background())
	}
	os.Exit(m.Run())
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture writes the skill package dir/id: manifest as skill.json, and the module built from
// testdata/wat/<wasm>.wat as its execute.wasm.
func fixture(t *testing.T, dir, id, manifest, wasm string) string {
	t.Helper()
	sd := filepath.Join(dir, id)
	writeFile(t, filepath.Join(sd, "skill.json"), manifest)
	data, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", wasm+".wasm"))
	if err != nil {
		t.Fatalf("fixture %s: %v (run make fixtures)", wasm, err)
	}
	if err := os.WriteFile(filepath.Join(sd, spec.ModuleFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return sd
}

// manifest returns a minimal valid manifest for id with extra JSON members spliced in.
func manifest(id, extra string) string {
	m := `{"id":"` + id + `","name":"` + id + `","description":"test skill ` + id + `"`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}

const guideMD = `---
name: guide
description: How to write a guide. Use it when the user asks for one.
---

# Guide

Write a guide about $ARGUMENTS in three parts.
`

// env is a runtime over a temporary directory of fixtures (first, so it can be changed) and the
// bundled skills, served by a Server.
type env struct {
	dir string // the temporary skills directory
	rt  *runtime.Runtime
	srv *mcpserver.Server
}

// newEnv makes the temporary skills: echo (returns its arguments), number (returns the number 3),
// mismatch (echo with a result schema its results fail), sleep (never ends by itself: only its
// caller, or its timeout of 60 s, ends it), and the instruction skill guide with resources:
// reference/api.md, data/blob.bin (not UTF-8), a hidden .secret and a symlink leading out of
// the skill.
func newEnv(t *testing.T, opts mcpserver.Options) *env {
	t.Helper()
	return newEnvRuntime(t, opts, runtime.Config{})
}

// newEnvRuntime is newEnv with a runtime configured by cfg (its SkillDirs are set, and a Shared
// on the tests' cache unless it has one).
func newEnvRuntime(t *testing.T, opts mcpserver.Options, cfg runtime.Config) *env {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "skills")
	fixture(t, dir, "echo", manifest("echo", `"parameters":{"text":{"type":"string","required":true}},"result":{"type":"object"}`), "echo")
	fixture(t, dir, "number", manifest("number", ""), "bigname")
	fixture(t, dir, "mismatch", manifest("mismatch", `"parameters":{"type":"object"},"result":{"type":"object","required":["greeting"]}`), "echo")
	fixture(t, dir, "sleep", manifest("sleep", `"limits":{"timeoutMs":60000}`), "sleep")
	guide := filepath.Join(dir, "guide")
	writeFile(t, filepath.Join(guide, "SKILL.md"), guideMD)
	writeFile(t, filepath.Join(guide, "reference", "api.md"), "# API\n\nCall it.\n")
	writeFile(t, filepath.Join(guide, "data", "blob.bin"), "\xff\xfe\x00binary")
	writeFile(t, filepath.Join(guide, ".secret"), "hunter2")
	writeFile(t, filepath.Join(root, "outside.txt"), "outside the skill")
	if err := os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(guide, "escape.md")); err != nil {
		t.Fatal(err)
	}
	cfg.SkillDirs = []string{dir, bundled}
	if cfg.Shared == nil {
		cfg.Shared = testengine.Shared(t, runtime.SharedConfig{CacheDir: cacheDir})
	}
	rt, err := runtime.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	srv := mcpserver.New(rt, opts)
	t.Cleanup(srv.Close)
	return &env{dir: dir, rt: rt, srv: srv}
}

// connect connects a client of the official Go SDK to e's server over in-memory transports
// (through Server.Transport, as an embedder would), speaking protocol (newProtocol: the client's
// latest).
func (e *env) connect(t *testing.T, protocol string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := e.srv.MCP().Connect(ctx, e.srv.Transport(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "skillbox-test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// connectHTTP is connect over streamable HTTP: e's Handler on a loopback server of its own.
func (e *env) connectHTTP(t *testing.T, protocol string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hs := httptest.NewServer(e.srv.Handler())
	t.Cleanup(hs.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "skillbox-test", Version: "1"}, opts)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// testContext bounds a test's exchange with the server: a hang guard, long enough for a slow,
// busy machine to compile a module on the way (under -race, the runtime gives a compilation
// ten minutes).
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

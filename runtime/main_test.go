package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/spec"
)

// TestMain lets the runtimes of these tests compile modules in a child process: this test
// binary, run again (see runtime.MaybeCompileChild).
func TestMain(m *testing.M) {
	MaybeCompileChild()
	os.Exit(m.Run())
}

// cacheDir is the compilation cache of every test, shared with the other packages' tests (and
// kept between runs): a Go-built module takes seconds to compile under -race, and wazero's cache
// is safe to share between processes.
var cacheDir = testcache.Dir()

// fixture writes a skill package named id into dir: manifest as given, and the module built
// from testdata/wat/<wasm>.wat (testdata/wasm/<wasm>.wasm).
func fixture(t testing.TB, dir, id, manifest, wasm string) string {
	t.Helper()
	sd := filepath.Join(dir, id)
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, "skill.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if wasm != "" {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", wasm+".wasm"))
		if err != nil {
			t.Fatalf("fixture %s: %v (run make fixtures)", wasm, err)
		}
		if err := os.WriteFile(filepath.Join(sd, spec.ModuleFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sd
}

// simple returns a minimal valid manifest for id with extra JSON fields spliced in.
func simple(id, extra string) string {
	m := `{"id":"` + id + `","name":"` + id + `","description":"test skill ` + id + `"`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}

// settled waits until the background check has checked every skill of rt (see background), so a
// newShared is a Shared made with cfg (on the tests' cache, unless cfg names one or NoCache),
// closed when the test ends: after the runtimes made on it later, as cleanups run last first.
func newShared(t testing.TB, cfg SharedConfig) *Shared {
	t.Helper()
	if cfg.CacheDir == "" && !cfg.NoCache {
		cfg.CacheDir = cacheDir
	}
	sh, err := NewShared(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close(context.Background()) })
	return sh
}

// test sees what the check found. The bound is for a hung check, not a measure of time.
func settled(t testing.TB, rt *Runtime) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := rt.background.wait(ctx); err != nil {
		t.Fatalf("the background check did not finish: %v", err)
	}
}

func newRuntime(t testing.TB, cfg Config) *Runtime {
	t.Helper()
	if cfg.Shared == nil {
		cfg.Shared = newShared(t, SharedConfig{})
	}
	rt, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// testAdmin is the principal the tests read records as: the operator, who sees every run.
var testAdmin = access.Principal{Key: "test", Role: access.RoleAdmin}

// asAgent is who, as an agent-facing tool acts for them (access.Principal.Agent).
func asAgent(who access.Principal) access.Principal {
	who.Agent = true
	return who
}

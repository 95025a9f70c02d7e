package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/runtime"
)

// TestMain lets the runtimes of these tests compile modules in a child process: this test
// binary, run again (see runtime.MaybeCompileChild).
func TestMain(m *testing.M) {
	runtime.MaybeCompileChild()
	os.Exit(m.Run())
}

// cacheDir is the compilation cache the runtime's own tests use, shared between packages.
var cacheDir = testcache.Dir()

// fixture writes a skill package: files by name, and execute.wasm copied from
// testdata/wasm/echo.wasm when withModule is set.
func fixture(t testing.TB, dir, id string, files map[string]string, withModule bool) {
	t.Helper()
	sd := filepath.Join(dir, id)
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(sd, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if withModule {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
		if err != nil {
			t.Fatalf("echo.wasm: %v (run make fixtures)", err)
		}
		if err := os.WriteFile(filepath.Join(sd, runtime.ModuleFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newRuntime(t testing.TB, dir string, p *runtime.Policy) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(context.Background(), runtime.Config{SkillDirs: []string{dir}, Policy: p, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// catalog is a Catalog of given skills, for tests that need no files.
type catalog []*runtime.Skill

func (c catalog) Skills() []*runtime.Skill { return c }

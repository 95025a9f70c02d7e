// Package testengine makes the runtime.Shared a test's runtimes run on, for the tests of every
// package but runtime's own (which cannot import a package that imports it).
package testengine

import (
	"context"
	"testing"

	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Shared is a runtime.Shared made with cfg, closed when the test ends (after the runtimes made
// on it later in the test: cleanups run last first). Without a CacheDir, and unless NoCache, it
// uses the cache every package's tests share (testcache.Dir), so a module compiles once a run.
func Shared(t testing.TB, cfg runtime.SharedConfig) *runtime.Shared {
	t.Helper()
	if cfg.CacheDir == "" && !cfg.NoCache {
		cfg.CacheDir = testcache.Dir()
	}
	sh, err := runtime.NewShared(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close(context.Background()) })
	return sh
}

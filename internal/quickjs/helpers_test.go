package quickjs

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/skillbox-dev/skillbox/hostfuncs"
	"github.com/skillbox-dev/skillbox/internal/broker"
	"github.com/skillbox-dev/skillbox/internal/broker/brokertest"
	"github.com/skillbox-dev/skillbox/internal/scripterr"
	"github.com/skillbox-dev/skillbox/internal/testcache"
)

var (
	compiledMu sync.Mutex
	compiled   = map[uint32]*Compiled{}
)

// compiledFor returns the reactor compiled under a memory cap of pages (shared by the tests),
// with the engine configuration the runtime uses for a module wazero must interrupt.
func compiledFor(t testing.TB, pages uint32) *Compiled {
	t.Helper()
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if c := compiled[pages]; c != nil {
		return c
	}
	c, err := Compile(context.Background(), testRuntimeConfig(t, pages))
	if err != nil {
		t.Fatal(err)
	}
	compiled[pages] = c
	return c
}

// testRuntimeConfig is the engine configuration the runtime uses for an interpreter, under a
// memory cap of pages, with the tests' compilation cache.
func testRuntimeConfig(t testing.TB, pages uint32) wazero.RuntimeConfig {
	t.Helper()
	if err := os.MkdirAll(testcache.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	cache, err := wazero.NewCompilationCacheWithDir(testcache.Dir())
	if err != nil {
		t.Fatal(err)
	}
	return wazero.NewRuntimeConfig().WithCloseOnContextDone(false).WithMemoryLimitPages(pages).WithCompilationCache(cache)
}

// testHost serves the SkillContext from a real hostfuncs.Call, as the runtime will, and records
// the log lines (see brokertest).
type testHost = brokertest.Host

type logLine = brokertest.Line

func newHost(_ testing.TB, g *hostfuncs.Grant) *testHost { return brokertest.New(g) }

func loopbackGrant(t testing.TB, patterns ...string) *hostfuncs.Grant {
	return brokertest.LoopbackGrant(t, patterns...)
}

// skill wraps the body of execute into the bundle shape esbuild makes (an IIFE assigning __skill).
func skill(body string) string {
	return `var __skill = (() => { return { execute: ` + body + ` }; })();`
}

// run runs src with args under the default test cap (64 MiB).
func runSkill(t testing.TB, ctx context.Context, h broker.Host, src, args string) (Result, error) {
	t.Helper()
	return Run(ctx, compiledFor(t, 1024), Program{Source: src, Args: []byte(args)}, h)
}

// wantKind fails t unless err is an *Error of kind k, and returns it.
func wantKind(t testing.TB, err error, k scripterr.Kind) *scripterr.Error {
	t.Helper()
	var e *scripterr.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want an *scripterr.Error of kind %s", err, err, k)
	}
	if e.Kind != k {
		t.Fatalf("kind = %s, want %s (err: %v)", e.Kind, k, err)
	}
	return e
}

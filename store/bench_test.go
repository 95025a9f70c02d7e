package store_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/pgserver"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/postgres"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// BenchmarkRecordOverhead is what recording a run costs: the same trivial run (hello) on a
// runtime without a store and on one recording into the store, interleaved run by run so both
// see the same machine. It reports each one's time per run and their ratio (recorded/bare).
func BenchmarkRecordOverhead(b *testing.B) {
	benchStores(b, func(b *testing.B, _ string, s store.Store) {
		rec := storetest.NewRecorder(b, s, store.RecorderOptions{})
		benchOverhead(b, runtime.Config{Recorder: rec})
	})
}

// BenchmarkVersionsOverhead is what keeping versions costs a run by id: the same trivial run on
// a runtime without versions and on one that keeps them in the store (its version recorded on
// the first run, then looked up in the list the runtime caches for a second), interleaved.
func BenchmarkVersionsOverhead(b *testing.B) {
	benchStores(b, func(b *testing.B, _ string, s store.Store) { benchOverhead(b, runtime.Config{Versions: s}) })
}

// benchStores runs fn on a fresh SQLite store and on a fresh PostgreSQL one (when present),
// each a sub-benchmark named by its driver, which fn is told.
func benchStores(b *testing.B, fn func(b *testing.B, driver string, s store.Store)) {
	b.Run("sqlite", func(b *testing.B) {
		s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), sqlite.FileName))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		fn(b, "sqlite", s)
	})
	b.Run("postgres", func(b *testing.B) {
		srv, err := pgserver.Start(b.Context())
		if err != nil {
			b.Skip(err)
		}
		defer srv.Stop()
		dsn, err := srv.NewDatabase(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		s, err := postgres.Open(b.Context(), dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		fn(b, "postgres", s)
	})
}

// benchOverhead times a trivial run on a bare runtime and on one configured with with's
// Recorder and Versions, interleaved, and reports both and their ratio.
func benchOverhead(b *testing.B, with runtime.Config) {
	mk := func(cfg runtime.Config) *runtime.Runtime {
		cfg.SkillDirs, cfg.NoBackgroundCheck = []string{"../skills"}, true
		cfg.Shared = testengine.Shared(b, runtime.SharedConfig{NoCache: true})
		rt, err := runtime.New(b.Context(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		return rt
	}
	bare, recorded := mk(runtime.Config{}), mk(with)
	defer bare.Close(context.Background())
	defer recorded.Close(context.Background())
	req := run.Request{Skill: "hello", Args: json.RawMessage(`{"name":"bench"}`), Who: access.Local("test")}
	run := func(rt *runtime.Runtime) time.Duration {
		start := time.Now()
		if _, err := rt.Run(b.Context(), req); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	run(bare) // compile both before timing
	run(recorded)
	var tb, tr time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 { // alternate which goes first
			tb += run(bare)
			tr += run(recorded)
		} else {
			tr += run(recorded)
			tb += run(bare)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(tb.Nanoseconds())/n, "bare-ns/run")
	b.ReportMetric(float64(tr.Nanoseconds())/n, "recorded-ns/run")
	b.ReportMetric(float64(tr)/float64(tb), "ratio")
}

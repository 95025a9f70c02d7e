package server

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/internal/interleave"
	"github.com/skillbox-dev/skillbox/internal/pgserver"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/postgres"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// storeBenchClients is how many clients post at once in BenchmarkStoreRate: enough that a
// store's commits can be grouped, as they are under a real load.
const storeBenchClients = 16

// BenchmarkStoreRate is the rate of trivial runs over loopback HTTP from storeBenchClients
// parallel clients against a server without a store (serve --no-store), one with the default
// SQLite store and, when PostgreSQL is installed, one with a PostgreSQL store: each store keeps
// the runs' history and the skill's versions, as serve does. One op is one volley of
// storeBenchClients runs per server, the servers interleaved volley by volley; "x-nostore" is a
// store's rate over the rate without one, from the medians (targets: sqlite >= 0.7,
// postgres >= 0.6). "nowrite" is the ceiling of those: a recorder whose store takes every
// batch without writing it, so its runs pay the outbox and the wait for a commit, not the
// database.
//
//	go test -run '^$' -bench StoreRate -benchtime 300x ./server/
func BenchmarkStoreRate(b *testing.B) {
	shared := testengine.Shared(b, runtime.SharedConfig{Admission: runtime.Admission{MaxRuns: 256, MaxQueue: 1024}})
	dir := b.TempDir()
	fixture(b, dir, "hello", manifestJSON("hello", ""), "hello", nil)
	recs := map[string]*store.Recorder{}
	serve := func(name string, s store.Store) string {
		cfg := runtime.Config{Shared: shared}
		if s != nil {
			rec := storetest.NewRecorder(b, s, store.RecorderOptions{})
			cfg.Recorder, cfg.Versions, cfg.Artifacts = rec, s, rec
			recs[name] = rec
		}
		return newEnvRuntime(b, Options{History: s}, cfg, dir).ts.URL + "/v1/skills/hello/runs"
	}
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	volley := func(url string) func() {
		return func() {
			var wg sync.WaitGroup
			for range storeBenchClients {
				wg.Go(func() { httpRun(b, client, url) })
			}
			wg.Wait()
			if b.Failed() {
				b.FailNow()
			}
		}
	}
	lite, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), sqlite.FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lite.Close() })
	// The ceiling of the design: the recorder's outbox and a run's wait for its start's
	// commit, over a store whose writes cost nothing (see noWrites).
	bare, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), sqlite.FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bare.Close() })
	cs := []interleave.Contender{{Name: "nostore", F: volley(serve("nostore", nil))}, {Name: "sqlite", F: volley(serve("sqlite", lite))},
		{Name: "nowrite", F: volley(serve("nowrite", noWrites{bare}))}}
	if srv, err := pgserver.Start(context.Background()); err == nil {
		b.Cleanup(srv.Stop)
		dsn, err := srv.NewDatabase(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		pg, err := postgres.Open(b.Context(), dsn)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pg.Close() })
		cs = append(cs, interleave.Contender{Name: "postgres", F: volley(serve("postgres", pg))})
	} else {
		b.Logf("no postgres contender: %v", err)
	}
	p50 := interleave.Run(b, cs...)
	b.ReportMetric(storeBenchClients/(p50["nostore"]/1e9), "nostore-runs/s")
	runs := float64((b.N + 2) * storeBenchClients) // interleave warms up with two calls
	for _, c := range cs[1:] {
		b.ReportMetric(p50["nostore"]/p50[c.Name], c.Name+"-x-nostore")
		// What the store's writes cost: its commits and the rows they write, per run.
		st := recs[c.Name].Stats()
		b.ReportMetric(float64(st.Commits)/runs, c.Name+"-commits/run")
		b.ReportMetric(float64(st.Written)/runs, c.Name+"-rows/run")
	}
}

// noWrites is a store that takes every batch of runs without writing it: the floor of a
// recorder's cost in BenchmarkStoreRate. Everything else is the store it wraps.
type noWrites struct{ store.Store }

func (noWrites) WriteRuns(context.Context, []store.Run) error { return nil }

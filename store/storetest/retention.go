package storetest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/store"
)

// Retention is each tenant's own: a prune through one tenant's store counts and ages that
// tenant's runs alone, so a busy tenant's runs never push a quiet tenant's out, however much
// older the quiet one's are, and a pruned run's shared artifact content stays for the tenant
// still holding it. RunTenants lists the tenants a sweep must prune, a page at a time.
func testTenantRetention(t *testing.T, h Harness) {
	root := open(t, h, h.New(t))
	ctx := t.Context()
	quiet, busy := root.Tenant("acme"), root.Tenant("globex")
	// acme ran 5 runs long ago (0-4 ms after base), and holds one still running older still;
	// globex ran 30 since (5-34); the default tenant 3 last (35-37).
	for i := range 5 {
		mustFinish(t, quiet, finished(i, "report", store.StatusSucceeded))
	}
	live := store.Run{ID: "run_acme_live", Skill: "report", Face: "http", StartedAt: base.Add(-time.Hour), Owner: "o", LeaseUntil: time.Now().Add(time.Hour)}
	if err := quiet.BeginRun(ctx, live); err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 35; i++ {
		mustFinish(t, busy, finished(i, "crawl", store.StatusSucceeded))
	}
	for i := 35; i < 38; i++ {
		mustFinish(t, root, finished(i, "echo", store.StatusSucceeded))
	}
	shared := []byte("a chart both tenants' runs drew")
	if err := quiet.PutArtifacts(ctx, "run_000000", []artifact.File{fileOf("chart.svg", "image/svg+xml", shared)}); err != nil {
		t.Fatal(err)
	}
	if err := busy.PutArtifacts(ctx, "run_000005", []artifact.File{fileOf("chart.svg", "image/svg+xml", shared)}); err != nil {
		t.Fatal(err)
	}
	counts := func(want ...int) {
		t.Helper()
		for i, s := range []store.Store{quiet, busy, root} {
			p, err := s.ListRuns(ctx, store.Query{Limit: store.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Runs) != want[i] {
				t.Fatalf("%s has %d runs, want %d: %v", []string{"acme", "globex", "the default tenant"}[i], len(p.Runs), want[i], ids(p.Runs))
			}
		}
	}
	counts(6, 30, 3)

	// globex keeps its newest 10: 20 of its own go, none of acme's older ones.
	if n, err := busy.PruneRuns(ctx, store.Retention{MaxRuns: 10, MaxAge: store.Unlimited}, base); err != nil || n != 20 {
		t.Fatalf("globex's prune by count: %d, %v; want 20", n, err)
	}
	counts(6, 10, 3)
	if data, _ := readBack(t, quiet, "run_000000", "chart.svg"); !bytes.Equal(data, shared) {
		t.Fatalf("acme's artifact after globex's run with the same content was pruned: %q", data)
	}
	// By age: globex's runs before base+29ms go (25-28), not acme's, older still.
	if n, err := busy.PruneRuns(ctx, store.Retention{MaxRuns: store.Unlimited, MaxAge: time.Millisecond}, base.Add(30*time.Millisecond)); err != nil || n != 4 {
		t.Fatalf("globex's prune by age: %d, %v; want 4", n, err)
	}
	counts(6, 6, 3)
	// The default tenant's prune is its own too.
	if n, err := root.PruneRuns(ctx, store.Retention{MaxRuns: 1, MaxAge: store.Unlimited}, base); err != nil || n != 2 {
		t.Fatalf("the default tenant's prune: %d, %v; want 2", n, err)
	}
	counts(6, 6, 1)
	// acme's own retention: its newest 2 finished runs stay, and the running one.
	if n, err := quiet.PruneRuns(ctx, store.Retention{MaxRuns: 2, MaxAge: store.Unlimited}, base); err != nil || n != 3 {
		t.Fatalf("acme's prune: %d, %v; want 3", n, err)
	}
	counts(3, 6, 1)
	if _, _, err := quiet.OpenArtifact(ctx, "", "run_000000", "chart.svg"); !errors.Is(err, artifact.ErrNoRun) {
		t.Fatalf("acme's pruned run's artifact: %v, want ErrNoRun", err)
	}

	// The tenants with runs, from any tenant's store, a page at a time; never the default.
	for _, s := range []store.Store{root, quiet} {
		if got, err := s.RunTenants(ctx, "", 10); err != nil || !slices.Equal(got, []string{"acme", "globex"}) {
			t.Fatalf("RunTenants: %q, %v", got, err)
		}
	}
	if got, err := root.RunTenants(ctx, "", 1); err != nil || !slices.Equal(got, []string{"acme"}) {
		t.Fatalf("RunTenants, a page of 1: %q, %v", got, err)
	}
	if got, err := root.RunTenants(ctx, "acme", 1); err != nil || !slices.Equal(got, []string{"globex"}) {
		t.Fatalf("RunTenants after acme: %q, %v", got, err)
	}
	if got, err := root.RunTenants(ctx, "globex", 10); err != nil || len(got) != 0 {
		t.Fatalf("RunTenants after the last: %q, %v", got, err)
	}
	for _, limit := range []int{0, -1, store.MaxLimit + 1} {
		if _, err := root.RunTenants(ctx, "", limit); !errors.Is(err, store.ErrBadQuery) {
			t.Errorf("RunTenants with limit %d: %v, want ErrBadQuery", limit, err)
		}
	}
}

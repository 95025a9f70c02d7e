package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/version"
)

// Each tenant's store sees its own runs and versions only: a run of one is not found through
// another, pages list a tenant's runs alone, the same skill id and even the same content are two
// versions with their own status, and a run that names another tenant is refused.
func testTenantIsolation(t *testing.T, h Harness) {
	root := open(t, h, h.New(t))
	ctx := t.Context()
	a, b := root.Tenant("acme"), root.Tenant("globex")
	ra, rb, r0 := finished(1, "report", store.StatusSucceeded), finished(2, "report", store.StatusFailed), finished(3, "report", store.StatusSucceeded)
	mustFinish(t, a, ra)
	mustFinish(t, b, rb)
	mustFinish(t, root, r0)
	for _, c := range []struct {
		name string
		s    store.Store
		own  string
	}{{"acme", a, ra.ID}, {"globex", b, rb.ID}, {"the default tenant", root, r0.ID}} {
		page, err := c.s.ListRuns(ctx, store.Query{})
		if err != nil || len(page.Runs) != 1 || page.Runs[0].ID != c.own {
			t.Fatalf("%s lists %+v (%v), want its run %s alone", c.name, page.Runs, err, c.own)
		}
		for _, id := range []string{ra.ID, rb.ID, r0.ID} {
			got, err := c.s.FindRun(ctx, id)
			if id == c.own && (err != nil || got.ID != id) {
				t.Fatalf("%s finds its own run %s: %v", c.name, id, err)
			}
			if id != c.own && !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s finds run %s of another tenant: %+v, %v", c.name, id, got, err)
			}
		}
	}
	if got, _ := a.FindRun(ctx, ra.ID); got.Tenant != "acme" {
		t.Errorf("acme's run reads back with tenant %q", got.Tenant)
	}
	// A run that says it is another tenant's is refused, and a finish with another tenant's
	// run id changes nothing of that run.
	wrong := finished(4, "report", store.StatusSucceeded)
	wrong.Tenant = "globex"
	if err := a.FinishRun(ctx, wrong); err == nil {
		t.Fatal("acme's store recorded a run of globex")
	}
	hijack := finished(2, "report", store.StatusSucceeded) // rb's id
	_ = a.FinishRun(ctx, hijack)
	if got, err := b.FindRun(ctx, rb.ID); err != nil || got.Status != store.StatusFailed {
		t.Fatalf("globex's run after acme wrote its id: %+v, %v", got, err)
	}
	if _, err := a.FindRun(ctx, rb.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("acme reads globex's run id after writing it: %v", err)
	}

	// Versions: the same skill and content in two tenants, each with its own life.
	t0 := time.Unix(1_700_000_000, 0).UTC()
	files := map[string][]byte{"skill.json": []byte(`{"id":"report"}`)}
	v := newVersion("report", "same", t0)
	for _, s := range []store.Store{a, b} {
		if _, created, err := s.AddVersion(ctx, v, files); err != nil || !created {
			t.Fatalf("add the same version to each tenant: created=%v %v", created, err)
		}
	}
	pub := version.Transitions["publish"]
	if _, err := a.SetVersionStatus(ctx, "report", v.Digest, pub, "alice", "", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Version(ctx, "report", v.Digest); err != nil || got.Status != version.Draft {
		t.Fatalf("globex's version after acme published its own: %+v, %v", got, err)
	}
	if _, err := b.SetVersionStatus(ctx, "report", v.Digest, pub, "bob", "", t0.Add(2*time.Second)); err != nil {
		t.Fatalf("globex publishes its own copy: %v (one active version per skill is per tenant)", err)
	}
	if vs, err := root.Versions(ctx, "report"); err != nil || len(vs) != 0 {
		t.Fatalf("the default tenant sees %d versions of the tenants' skill (%v)", len(vs), err)
	}
	if _, err := root.VersionFiles(ctx, "report", v.Digest); !errors.Is(err, version.ErrNotFound) {
		t.Fatalf("the default tenant reads a tenant's version files: %v", err)
	}
	if got, err := a.VersionFiles(ctx, "report", v.Digest); err != nil || string(got["skill.json"]) != `{"id":"report"}` {
		t.Fatalf("acme's files: %v", err)
	}
	// Artifacts: a tenant reads its own runs' files; another tenant is told there is no such run.
	if err := a.PutArtifacts(ctx, ra.ID, []artifact.File{fileOf("report.txt", "text/plain", []byte("acme only"))}); err != nil {
		t.Fatal(err)
	}
	if data, _ := readBack(t, a, ra.ID, "report.txt"); string(data) != "acme only" {
		t.Fatalf("acme's artifact: %q", data)
	}
	if _, _, err := b.OpenArtifact(ctx, "", ra.ID, "report.txt"); !errors.Is(err, artifact.ErrNoRun) {
		t.Fatalf("globex opens acme's artifact: %v", err)
	}
	if _, _, err := root.OpenArtifact(ctx, "", ra.ID, "report.txt"); !errors.Is(err, artifact.ErrNoRun) {
		t.Fatalf("the default tenant opens acme's artifact: %v", err)
	}
	// Closing a tenant's store leaves the database open for the others.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.FindRun(ctx, rb.ID); err != nil {
		t.Fatalf("after acme's store closed: %v", err)
	}
}

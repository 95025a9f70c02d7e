package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
)

// Tenants over one Runtime share its skills: the very Skills it loaded (scanned once, however
// many tenants), under its policy; each tenant's own skills lie over them and shadow one of the
// same id for that tenant alone; a reload of the Runtime below reaches every tenant over it, and
// a tenant's own reload rescans its own directory only.
func TestTenantsOverOneRuntime(t *testing.T) {
	ctx := context.Background()
	shared := t.TempDir()
	fixture(t, shared, "common", simple("common", ""), "hello")
	fixture(t, shared, "report", simple("report", `"version":"shared"`), "hello")
	sh := newShared(t, SharedConfig{})
	pol := &policy.Policy{Env: map[string]string{"X": "1"}}
	base := newRuntime(t, Config{SkillDirs: []string{shared}, Policy: pol, Shared: sh})

	tenant := func(name string) (*Runtime, string) {
		dir := t.TempDir()
		rt := newRuntime(t, Config{Tenant: name, SkillDirs: []string{dir}, Under: base, Shared: sh})
		return rt, dir
	}
	acme, acmeDir := tenant("acme")
	globex, _ := tenant("globex")
	fixture(t, acmeDir, "report", simple("report", `"version":"acme"`), "hello")
	must(t, acme.Reload(ctx))

	common, _ := base.Skill("common")
	for _, rt := range []*Runtime{acme, globex} {
		s, err := rt.Skill("common")
		if err != nil || s != common {
			t.Fatalf("%s: common is %p (%v), want the base's %p: loaded once", rt.cfg.Tenant, s, err, common)
		}
		if got := rt.policy.Load(); got != base.policy.Load() {
			t.Fatalf("%s: its own policy, not the base's", rt.cfg.Tenant)
		}
	}
	if s, _ := acme.Skill("report"); s.Version() != "acme" {
		t.Fatalf("acme's report is %q, want its own", s.Version())
	}
	if s, _ := globex.Skill("report"); s.Version() != "shared" {
		t.Fatalf("globex's report is %q, want the shared one", s.Version())
	}
	res, err := globex.Run(ctx, run.Request{Skill: "common", Who: testAdmin})
	if err != nil || !res.Success {
		t.Fatalf("globex runs common: %v", err)
	}
	if rec, ok := globex.RunRecord(testAdmin, res.RunID); !ok || rec.Tenant != "globex" {
		t.Fatalf("the run is recorded as %+v, want globex's", rec)
	}

	// A new shared skill reaches every tenant at the base's reload.
	fixture(t, shared, "fresh", simple("fresh", ""), "hello")
	must(t, base.Reload(ctx))
	for _, rt := range []*Runtime{acme, globex} {
		if !slices.Contains(ids(rt), "fresh") {
			t.Fatalf("%s after the base's reload: %v", rt.cfg.Tenant, ids(rt))
		}
	}
	// A tenant's reload is its own: the shared directory is rescanned by the base alone.
	must(t, os.RemoveAll(filepath.Join(shared, "fresh")))
	must(t, globex.Reload(ctx))
	if !slices.Contains(ids(globex), "fresh") {
		t.Fatalf("globex's reload rescanned the shared directory: %v", ids(globex))
	}

	// A Runtime over another takes its policy: it has none of its own to set.
	if err := acme.SetPolicy(ctx, &policy.Policy{}); err == nil {
		t.Fatal("SetPolicy on a Runtime over another")
	}
	for name, cfg := range map[string]Config{
		"policy":      {Under: base, Policy: &policy.Policy{}},
		"policy file": {Under: base, PolicyFile: "policy.yaml"},
		"over over":   {Under: acme},
	} {
		cfg.Shared = sh
		if rt, err := New(ctx, cfg); err == nil {
			rt.Close(ctx)
			t.Errorf("%s: New accepted it", name)
		}
	}
	// Closing a tenant leaves the base and the other tenant serving.
	must(t, acme.Close(ctx))
	must(t, base.Reload(ctx))
	if _, err := globex.Skill("common"); err != nil {
		t.Fatal(err)
	}
}

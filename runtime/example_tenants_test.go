package runtime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
)

// Tenants share one engine, compilation cache and admission (a Shared), each with a Runtime of
// its own skills, which no other tenant sees. Within a tenant, a user's Runtime (Runtime.User)
// serves the tenant's skills and the user's own, which only that user sees.
func ExampleShared() {
	ctx := context.Background()
	dir := exampleDir()
	defer os.RemoveAll(dir)
	hello := wasmModule("hello")
	writeSkill(filepath.Join(dir, "acme"), "report", map[string]string{
		"skill.json": `{"id": "report", "name": "Report", "description": "Acme's report."}`, "execute.wasm": hello,
	})
	writeSkill(filepath.Join(dir, "globex"), "invoice", map[string]string{
		"skill.json": `{"id": "invoice", "name": "Invoice", "description": "Globex's invoice."}`, "execute.wasm": hello,
	})

	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: testcache.Dir(), Admission: runtime.Admission{MaxRuns: 8}})
	check(err)
	defer sh.Close(ctx) // after the tenants' runtimes: defers run last first
	tenant := func(name string, quota runtime.Quota) *runtime.Runtime {
		rt, err := runtime.New(ctx, runtime.Config{Shared: sh, Tenant: name, Quota: quota,
			SkillDirs: []string{filepath.Join(dir, name)}, NoBackgroundCheck: true})
		check(err)
		return rt
	}
	acme := tenant("acme", runtime.Quota{ConcurrentRuns: 4})
	defer acme.Close(ctx)
	globex := tenant("globex", runtime.Quota{})
	defer globex.Close(ctx)
	_, err = globex.Run(ctx, run.Request{Skill: "report", Who: access.Principal{Tenant: "globex", Key: "globex-ci", Role: access.RoleRunner}})
	fmt.Println("acme:", skillIDs(acme), "globex:", skillIDs(globex), "globex runs report:", errorKind(err))

	// Alice, of acme, installs a skill of her own: hers alone. Every call that writes or runs
	// says who asks (a face builds the principal from what authenticated the request).
	alicePrincipal := access.Principal{Tenant: "acme", User: "alice@acme.example", Key: "alice-laptop", Role: access.RoleAuthor}
	bobPrincipal := access.Principal{Tenant: "acme", User: "bob@acme.example", Key: "bob-ci", Role: access.RoleRunner}
	alice, err := acme.User(ctx, "alice@acme.example")
	check(err)
	_, err = alice.Install(ctx, "notes", packageFiles(map[string]string{
		"skill.json": `{"id": "notes", "name": "Notes", "description": "Alice's notes."}`, "execute.wasm": hello,
	}), runtime.InstallOptions{Visibility: access.VisibilityUser, Who: alicePrincipal})
	check(err)
	bob, err := acme.User(ctx, "bob@acme.example")
	check(err)
	fmt.Println("alice:", skillIDs(alice), "bob:", skillIDs(bob), "acme:", skillIDs(acme))
	res, err := alice.Run(ctx, run.Request{Skill: "notes", Who: alicePrincipal})
	check(err)
	fmt.Println("alice runs notes:", string(res.Result))
	rec, _ := acme.RunRecord(access.Principal{Key: "ops", Role: access.RoleAdmin}, res.RunID) // the tenant keeps one history of its users' runs
	fmt.Println("the run is visible to:", rec.VisibleTo)
	_, err = bob.Run(ctx, run.Request{Skill: "notes", Who: bobPrincipal})
	fmt.Println("bob runs notes:", errorKind(err)) // as if it did not exist
	// Output:
	// acme: [report] globex: [invoice] globex runs report: not_found
	// alice: [notes report] bob: [report] acme: [report]
	// alice runs notes: {"greeting":"hi"}
	// the run is visible to: alice@acme.example
	// bob runs notes: not_found
}

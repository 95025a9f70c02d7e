package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// With a version store, every content of a skill is a version. Once a version was published, a
// new one that asks for more (here a network host) is pending: it does not run, and the
// published one keeps serving, until an admin approves it and a publisher publishes it.
func ExampleRuntime_ChangeVersion() {
	ctx := context.Background()
	dir := exampleDir()
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.FileName))
	check(err)
	defer st.Close()
	sh, err := runtime.NewShared(ctx, runtime.SharedConfig{CacheDir: testcache.Dir()})
	check(err)
	defer sh.Close(ctx)
	rt, err := runtime.New(ctx, runtime.Config{
		SkillDirs:         []string{filepath.Join(dir, "skills")},
		Policy:            &policy.Policy{Network: []string{"api.example.com"}}, // what a skill may be granted
		Versions:          st,
		Shared:            sh,
		NoBackgroundCheck: true,
	})
	check(err)
	defer rt.Close(ctx)
	publisher := access.Principal{Key: "release-bot", Role: access.RolePublisher}
	admin := access.Principal{Key: "ops@example.com", Role: access.RoleAdmin}
	dev := access.Principal{Key: "dev", Role: access.RoleAuthor} // who installs: an author

	// Version 1 asks for nothing; it is recorded a draft, and published.
	v1, err := rt.Install(ctx, "weather", packageFiles(map[string]string{
		"skill.json":   `{"id": "weather", "name": "Weather", "description": "Reports the weather.", "version": "1"}`,
		"execute.wasm": wasmModule("hello"),
	}), runtime.InstallOptions{Who: dev})
	check(err)
	_, err = rt.ChangeVersion(ctx, publisher, "weather", v1.Digest(), "publish", "")
	check(err)

	// Version 2 asks for a host: installed, but pending, with what it asks for beyond version 1.
	v2, err := rt.Install(ctx, "weather", packageFiles(map[string]string{
		"skill.json": `{"id": "weather", "name": "Weather", "description": "Reports the weather.", "version": "2",
			"permissions": {"network": ["api.example.com"]}}`,
		"execute.wasm": wasmModule("hello"),
	}), runtime.InstallOptions{Who: dev, Replace: true})
	check(err)
	queue, _, err := rt.FindVersions(ctx, access.Principal{Key: "ops", Role: access.RoleAdmin}, version.Query{Status: version.Pending}) // the review queue
	check(err)
	for _, v := range queue {
		fmt.Println("waits:", v.Skill, "version", v.Version, v.Status, v.Diff)
	}
	res, err := rt.Run(ctx, run.Request{Skill: "weather", Who: dev})
	check(err)
	fmt.Println("by id, runs version", res.Version)
	_, err = rt.Run(ctx, run.Request{Skill: "weather", Digest: v2.Digest(), Who: dev})
	fmt.Println("pinned to version 2:", errorKind(err))

	// Only an admin approves (a draft again); then it may be published.
	_, err = rt.ChangeVersion(ctx, publisher, "weather", v2.Digest(), "approve", "")
	fmt.Println("a publisher approves:", errors.Is(err, access.ErrForbidden))
	v, err := rt.ChangeVersion(ctx, admin, "weather", v2.Digest(), "approve", "the host is our weather API")
	check(err)
	fmt.Println("approved:", v.Status)
	v, err = rt.ChangeVersion(ctx, publisher, "weather", v2.Digest(), "publish", "")
	check(err)
	fmt.Println("published:", v.Status, v.Grant.Network)
	res, err = rt.Run(ctx, run.Request{Skill: "weather", Who: dev})
	check(err)
	fmt.Println("by id, runs version", res.Version)
	// Output:
	// waits: weather version 2 pending [network: + api.example.com]
	// by id, runs version 1
	// pinned to version 2: pending_approval
	// a publisher approves: true
	// approved: draft
	// published: active [api.example.com]
	// by id, runs version 2
}

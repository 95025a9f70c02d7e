package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/interleave"
)

// BenchmarkTenantReloadWithUsers is a tenant's Reload with 100 users who each own a skill, beside
// the same tenant's Reload with no users, interleaved: the ratio is what the users cost a reload.
// A user's view lays the user's own directory over the tenant's registry (overlay), so a reload
// rescans the users' directories only. It also reports the heap each view holds. (When each view
// scanned the tenant's skills again, a program measuring the same tenant on the same machine saw
// reloads of 100-150 ms and 35 KB a view; with the overlay, 10-20 ms and 5 KB; with views that
// share the tenant's machinery instead of being Runtimes of their own, 3.9 KB.)
//
//	go test -run '^$' -bench TenantReloadWithUsers -benchtime 20x ./runtime/
func BenchmarkTenantReloadWithUsers(b *testing.B) {
	const tenantSkills, users = 20, 100
	ctx := context.Background()
	tenant := func(withUsers bool) *Runtime {
		dir := b.TempDir()
		for i := range tenantSkills {
			id := fmt.Sprintf("team-%02d", i)
			fixture(b, dir, id, simple(id, ""), "hello")
		}
		if withUsers {
			for i := range users {
				user := fmt.Sprintf("user-%03d@acme.example", i)
				id := fmt.Sprintf("mine-%03d", i)
				fixture(b, filepath.Join(dir, usersDir, access.UserScope(user)), id, simple(id, ""), "hello")
			}
		}
		rt := newRuntime(b, Config{SkillDirs: []string{dir}, NoBackgroundCheck: true})
		rt.Skills()
		return rt
	}
	bare := tenant(false)
	crowded := tenant(true)
	before := heapInUse()
	for i := range users {
		u, err := crowded.User(ctx, fmt.Sprintf("user-%03d@acme.example", i))
		if err != nil {
			b.Fatal(err)
		}
		if n := len(u.Skills()); n != tenantSkills+1 {
			b.Fatalf("user %d sees %d skills, want %d", i, n, tenantSkills+1)
		}
	}
	viewsHeap := float64(heapInUse()) - float64(before)
	reload := func(rt *Runtime) func() {
		return func() {
			if err := rt.Reload(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	m := interleave.Run(b,
		interleave.Contender{Name: "no-users", F: reload(bare)},
		interleave.Contender{Name: "100-users", F: reload(crowded)})
	b.ReportMetric(m["100-users"]/m["no-users"], "x-tenant-alone")
	b.ReportMetric(viewsHeap/users, "heap-B/user")
}

// heapInUse is the heap's live bytes after a collection.
func heapInUse() uint64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

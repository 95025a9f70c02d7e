package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/catalog"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/version"
)

// ids are the ids of rt's skills.
func ids(rt *Runtime) []string {
	var out []string
	for _, s := range rt.Skills() {
		out = append(out, s.ID())
	}
	return out
}

// A user's own skills are the user's alone: listed, run and versioned in the user's Runtime
// only; two users may have skills of the same id; the tenant's skills are everyone's, and a
// user's Runtime installs and removes them through the tenant's, where every user sees the
// change.
func TestUserSkills(t *testing.T) {
	dir := t.TempDir()
	store := newVersionStore(t)
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Versions: store})
	ctx := context.Background()
	if _, err := rt.Install(ctx, "team", pkg(t, simple("team", ""), "hello"), InstallOptions{Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	alice, err := rt.User(ctx, "alice@acme.example")
	must(t, err)
	bob, err := rt.User(ctx, "bob")
	must(t, err)
	if again, _ := rt.User(ctx, "alice@acme.example"); again != alice {
		t.Fatal("User made a second Runtime for the same user")
	}
	if _, err := alice.User(ctx, "carol"); err == nil {
		t.Fatal("a user's Runtime made a user")
	}
	if _, err := rt.Install(ctx, "mine", pkg(t, simple("mine", ""), "hello"), InstallOptions{Visibility: access.VisibilityUser, Who: testAdmin}); !errors.Is(err, access.ErrVisibility) {
		t.Fatalf("a tenant's Runtime installed a user's skill: %v", err)
	}

	// Alice's own skill: hers alone, filed under her scope on disk and in the version store.
	s, err := alice.Install(ctx, "notes", pkg(t, simple("notes", `"version":"1"`), "hello"), InstallOptions{Visibility: access.VisibilityUser, Who: access.Local("alice@acme.example")})
	must(t, err)
	if alice.VisibilityOf(s) != access.VisibilityUser {
		t.Fatalf("alice's skill is %s", alice.VisibilityOf(s))
	}
	if _, err := os.Stat(filepath.Join(dir, usersDir, access.UserScope("alice@acme.example"), "notes", "skill.json")); err != nil {
		t.Fatalf("alice's skill is not in her directory: %v", err)
	}
	if got := ids(alice); !slices.Equal(got, []string{"notes", "team"}) {
		t.Fatalf("alice sees %v", got)
	}
	for name, other := range map[string]*Runtime{"the tenant": rt, "bob": bob} {
		if got := ids(other); !slices.Equal(got, []string{"team"}) {
			t.Fatalf("%s sees %v", name, got)
		}
		if _, err := other.Skill("notes"); !errors.Is(err, run.ErrNotFound) {
			t.Fatalf("%s finds alice's skill: %v", name, err)
		}
		if _, err := other.Run(ctx, run.Request{Skill: "notes", Who: testAdmin}); err == nil {
			t.Fatalf("%s ran alice's skill", name)
		}
		if _, err := other.Versions(ctx, "notes"); !errors.Is(err, run.ErrNotFound) {
			t.Fatalf("%s reads alice's skill's versions: %v", name, err)
		}
	}
	if !rt.HasUserSkills("alice@acme.example") || rt.HasUserSkills("nobody") {
		t.Fatal("HasUserSkills is wrong")
	}

	// Bob may have a skill of the same id: his own, with versions of its own.
	_, err = bob.Install(ctx, "notes", pkg(t, simple("notes", `"version":"2"`), "hello"), InstallOptions{Visibility: access.VisibilityUser, Who: testAdmin})
	must(t, err)
	av, err := alice.Versions(ctx, "notes")
	must(t, err)
	bv, err := bob.Versions(ctx, "notes")
	must(t, err)
	if len(av) != 1 || len(bv) != 1 || av[0].Version != "1" || bv[0].Version != "2" || av[0].Skill != "notes" {
		t.Fatalf("versions: alice %+v, bob %+v", av, bv)
	}
	if _, err := store.Versions(ctx, "notes@"+access.UserScope("alice@acme.example")); err != nil {
		t.Fatal(err)
	}
	if list, _ := store.Versions(ctx, "notes"); len(list) != 0 {
		t.Fatalf("a user's version is filed as the tenant's: %+v", list)
	}

	// A run of her own skill is hers to see; a run of the tenant's is the tenant's. The tenant
	// keeps one history of both.
	res, err := alice.Run(ctx, run.Request{Skill: "notes", Who: access.Local("alice@acme.example")})
	must(t, err)
	if rec, ok := rt.RunRecord(testAdmin, res.RunID); !ok || rec.VisibleTo != "alice@acme.example" {
		t.Fatalf("record of alice's run: %+v %v", rec, ok)
	}
	// The runtime decides who reads it: alice and the admins, not bob, nor a principal without
	// a name (once "" meant everyone).
	for _, who := range []struct {
		p    access.Principal
		sees bool
	}{
		{access.Principal{Key: "alice-key", User: "alice@acme.example", Role: access.RoleRunner}, true},
		{access.Principal{Key: "bob", Role: access.RoleAdmin - 1}, false},
		{access.Principal{Role: access.RoleRunner}, false},
	} {
		if _, ok := rt.RunRecord(who.p, res.RunID); ok != who.sees {
			t.Errorf("%+v reads alice's run: %v, want %v", who.p, ok, who.sees)
		}
	}
	res, err = alice.Run(ctx, run.Request{Skill: "team", Who: testAdmin})
	must(t, err)
	if rec, ok := rt.RunRecord(testAdmin, res.RunID); !ok || rec.VisibleTo != "" {
		t.Fatalf("record of alice's run of the tenant's skill: %+v %v", rec, ok)
	}
	// The tenant's counters count both, without naming alice's skill.
	counted := map[string]int64{}
	for _, c := range rt.Stats().Runs {
		counted[c.Skill] += c.Count
	}
	if counted["team"] != 1 || counted[privateSkillLabel] != 1 || counted["notes"] != 0 {
		t.Fatalf("the tenant's counters: %v", counted)
	}

	// Visibility clashes are refused, naming what to do.
	for name, tc := range map[string]struct {
		id   string
		opts InstallOptions
	}{
		"own over the tenant's":  {"team", InstallOptions{Visibility: access.VisibilityUser, Who: testAdmin}},
		"tenant's over own":      {"notes", InstallOptions{Visibility: access.VisibilityOrg, Who: testAdmin}},
		"update own as tenant's": {"notes", InstallOptions{Replace: true, Visibility: access.VisibilityOrg, Who: testAdmin}},
		"update tenant's as own": {"team", InstallOptions{Replace: true, Visibility: access.VisibilityUser, Who: testAdmin}},
		"an unknown visibility":  {"other", InstallOptions{Visibility: "public", Who: testAdmin}},
	} {
		if _, err := alice.Install(ctx, tc.id, pkg(t, simple(tc.id, ""), "hello"), tc.opts); !errors.Is(err, access.ErrVisibility) {
			t.Errorf("%s: %v", name, err)
		}
	}

	// A tenant's skill installed through a user's Runtime is the tenant's: every user sees it.
	_, err = alice.Install(ctx, "shared", pkg(t, simple("shared", ""), "hello"), InstallOptions{Who: testAdmin})
	must(t, err)
	if _, err := os.Stat(filepath.Join(dir, "shared")); err != nil {
		t.Fatalf("the tenant's skill is not in the tenant's directory: %v", err)
	}
	if !slices.Contains(ids(bob), "shared") || !slices.Contains(ids(rt), "shared") {
		t.Fatalf("bob sees %v, the tenant %v", ids(bob), ids(rt))
	}
	// Removing it through bob's Runtime removes the tenant's; alice's own stays hers.
	must(t, bob.Remove(ctx, testAdmin, "shared"))
	if slices.Contains(ids(alice), "shared") || slices.Contains(ids(rt), "shared") {
		t.Fatalf("after removal: alice %v, tenant %v", ids(alice), ids(rt))
	}
	must(t, alice.Remove(ctx, testAdmin, "notes"))
	if slices.Contains(ids(alice), "notes") || !slices.Contains(ids(bob), "notes") {
		t.Fatalf("after alice removed hers: alice %v, bob %v", ids(alice), ids(bob))
	}
	// Her versions stay hers.
	if av, err := alice.Versions(ctx, "notes"); err != nil || len(av) != 1 || av[0].Version != "1" {
		t.Fatalf("alice's versions after removal: %+v %v", av, err)
	}

	// Closing the tenant's Runtime closes its users'.
	must(t, rt.Close(ctx))
	if _, err := bob.Run(ctx, run.Request{Skill: "notes", Who: testAdmin}); !errors.Is(err, run.ErrClosed) {
		t.Fatalf("bob's Runtime runs after the tenant's closed: %v", err)
	}
}

// Users install, run and are made while the tenant installs and reloads: nothing races (run
// with -race), and every view ends as its last change left it.
func TestUserSkillsConcurrent(t *testing.T) {
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Versions: newVersionStore(t)})
	ctx := context.Background()
	_, err := rt.Install(ctx, "team", pkg(t, simple("team", ""), "hello"), InstallOptions{Who: testAdmin})
	must(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i, user := range []string{"u0", "u1", "u2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := rt.User(ctx, user)
			if err != nil {
				errs <- err
				return
			}
			id := fmt.Sprintf("own-%d", i)
			for range 5 {
				if _, err := u.Install(ctx, id, pkg(t, simple(id, ""), "hello"), InstallOptions{Replace: true, Visibility: access.VisibilityUser, Who: testAdmin}); err != nil {
					errs <- err
				}
				if _, err := u.Run(ctx, run.Request{Skill: id, Who: testAdmin}); err != nil {
					errs <- fmt.Errorf("%s runs %s: %w", user, id, err)
				}
				if _, err := u.Run(ctx, run.Request{Skill: "team", Who: testAdmin}); err != nil {
					errs <- fmt.Errorf("%s runs team: %w", user, err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 5 {
			if _, err := rt.Install(ctx, "org-extra", pkg(t, simple("org-extra", ""), "hello"), InstallOptions{Replace: true, Who: testAdmin}); err != nil {
				errs <- err
			}
			if err := rt.Reload(ctx); err != nil {
				errs <- err
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, user := range []string{"u0", "u1", "u2"} {
		u, _ := rt.User(ctx, user)
		want := []string{"org-extra", fmt.Sprintf("own-%d", i), "team"}
		if got := ids(u); !slices.Equal(got, want) {
			t.Errorf("%s sees %v, want %v", user, got, want)
		}
	}
	if got := ids(rt); !slices.Equal(got, []string{"org-extra", "team"}) {
		t.Errorf("the tenant sees %v", got)
	}
}

// FindVersions lists a tenant's versions in one status across its skills from its own Runtime
// and from any user's alike: a user's skill's version under its id, naming its user, to the
// viewers that see it. Its bounds are checked before the store is asked.
func TestFindVersions(t *testing.T) {
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Versions: newVersionStore(t)})
	ctx := context.Background()
	if _, err := rt.Install(ctx, "team", pkg(t, simple("team", ""), "hello"), InstallOptions{Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	alice, err := rt.User(ctx, "alice")
	must(t, err)
	if _, err := alice.Install(ctx, "notes", pkg(t, simple("notes", ""), "hello"), InstallOptions{Visibility: access.VisibilityUser, Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	admin := access.Principal{Key: "carol", Role: access.RoleAdmin}
	names := func(from *Runtime, who access.Principal, q version.Query) []string {
		t.Helper()
		list, _, err := from.FindVersions(ctx, who, q)
		must(t, err)
		var out []string
		for _, v := range list {
			out = append(out, v.Skill+"/"+v.User)
		}
		return out
	}
	for _, from := range []*Runtime{rt, alice} {
		if got := names(from, admin, version.Query{Status: version.Draft}); !slices.Equal(got, []string{"notes/alice", "team/"}) {
			t.Errorf("the admin's drafts: %v", got)
		}
		bob := access.Principal{Key: "bob", Role: access.RolePublisher}
		if got := names(from, bob, version.Query{Status: version.Draft}); !slices.Equal(got, []string{"team/"}) {
			t.Errorf("bob's drafts: %v", got)
		}
		// The view is the principal's: a Viewer the caller put in the query is not.
		if got := names(from, bob, version.Query{Status: version.Draft, Viewer: ""}); !slices.Equal(got, []string{"team/"}) {
			t.Errorf("bob asking for every user's drafts: %v", got)
		}
		if got := names(from, access.Principal{Role: access.RoleRunner}, version.Query{Status: version.Draft}); !slices.Equal(got, []string{"team/"}) {
			t.Errorf("a nameless principal's drafts: %v", got)
		}
	}
	if list, more, err := rt.FindVersions(ctx, admin, version.Query{Status: version.Draft, Limit: 1}); err != nil || len(list) != 1 || !more {
		t.Errorf("limit 1 of 2: %d more=%v %v", len(list), more, err)
	}
	if _, more, _ := rt.FindVersions(ctx, admin, version.Query{Status: version.Draft, Limit: 2}); more {
		t.Error("limit 2 of 2 says there are more")
	}
	for _, bad := range []version.Query{{Status: "waiting"}, {Status: version.Draft, Limit: -1}, {Status: version.Draft, Limit: version.MaxQuery + 1}} {
		if _, _, err := rt.FindVersions(ctx, admin, bad); !errors.Is(err, version.ErrBadQuery) {
			t.Errorf("%+v: %v, want ErrBadVersionQuery", bad, err)
		}
	}
	plain := newRuntime(t, Config{SkillDirs: []string{t.TempDir()}})
	if _, _, err := plain.FindVersions(ctx, admin, version.Query{Status: version.Pending}); !errors.Is(err, version.ErrNoStore) {
		t.Errorf("a runtime without versions: %v", err)
	}
}

// A user's view is the user's own skills over the tenant's registry, not a second scan of it: the
// tenant's skills are the very Skills the tenant has (loaded and checked once, however many users
// see them), a user's skill of the same id shadows the tenant's for that user alone, and a reload
// of the tenant reaches every user's view.
func TestUserViewIsAnOverlay(t *testing.T) {
	dir := t.TempDir()
	fixture(t, dir, "team", simple("team", ""), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, NoBackgroundCheck: true})
	ctx := context.Background()
	alice, err := rt.User(ctx, "alice")
	must(t, err)
	bob, err := rt.User(ctx, "bob")
	must(t, err)
	_, err = alice.Install(ctx, "shared-name", pkg(t, simple("shared-name", `"description":"alice's"`), "hello"), InstallOptions{Visibility: access.VisibilityUser, Who: testAdmin})
	must(t, err)
	// The tenant gets a skill of the same id later (an operator's copy, not an install, which
	// would refuse it).
	fixture(t, dir, "shared-name", simple("shared-name", `"description":"the tenant's"`), "hello")
	must(t, rt.Reload(ctx))

	tenantTeam, _ := rt.Skill("team")
	for _, u := range []*Runtime{alice, bob} {
		s, err := u.Skill("team")
		if err != nil || s != tenantTeam {
			t.Errorf("%s's team is %p (%v), the tenant's %p: a user's view must share the tenant's Skill", u.UserName(), s, err, tenantTeam)
		}
	}
	if s, _ := alice.Skill("shared-name"); s == nil || s.Description() != "alice's" {
		t.Errorf("alice's shared-name: %v, want hers", s)
	}
	if s, _ := bob.Skill("shared-name"); s == nil || s.Description() != "the tenant's" {
		t.Errorf("bob's shared-name: %v, want the tenant's", s)
	}
	if got := ids(alice); !slices.Equal(got, []string{"shared-name", "team"}) {
		t.Errorf("alice lists %v", got)
	}

	fixture(t, dir, "later", simple("later", ""), "hello")
	must(t, rt.Reload(ctx))
	for _, u := range []*Runtime{alice, bob} {
		later, _ := rt.Skill("later")
		if s, err := u.Skill("later"); err != nil || s != later {
			t.Errorf("%s after the tenant's reload: %v %v", u.UserName(), s, err)
		}
	}
}

// A user's view is not a second Runtime: making views (with a version store, and the background
// check on) makes no directory of its own, and the tenant's background check, which the views
// share, checks each user's own skills. Closing a view leaves the tenant serving.
func TestUserViewsShareTheTenant(t *testing.T) {
	const users = 20
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := t.TempDir()
	for i := range users {
		user := fmt.Sprintf("user-%02d", i)
		id := fmt.Sprintf("mine-%02d", i)
		fixture(t, filepath.Join(dir, usersDir, access.UserScope(user)), id, simple(id, ""), "hello")
	}
	fixture(t, dir, "team", simple("team", ""), "hello")
	rt := newRuntime(t, Config{SkillDirs: []string{dir}, Versions: newVersionStore(t)})
	ctx := context.Background()
	made, _ := os.ReadDir(tmp) // the tenant's own: where its stored versions are unpacked
	var views []*Runtime
	for i := range users {
		u, err := rt.User(ctx, fmt.Sprintf("user-%02d", i))
		must(t, err)
		if n := len(u.Skills()); n != 2 {
			t.Fatalf("user %d sees %d skills, want 2", i, n)
		}
		views = append(views, u)
	}
	if after, _ := os.ReadDir(tmp); len(after) != len(made) {
		t.Fatalf("%d users' views made %d entries in TMPDIR, want none: %v", users, len(after)-len(made), after)
	}
	eventually(t, "the users' own skills to be checked", func() bool {
		for i, u := range views {
			s, err := u.Skill(fmt.Sprintf("mine-%02d", i))
			if err != nil || s.Status() == catalog.StatusUnchecked {
				return false
			}
		}
		return true
	})
	must(t, views[0].Close(ctx))
	if res, err := rt.Run(ctx, run.Request{Skill: "team", Who: testAdmin}); err != nil || !res.Success {
		t.Fatalf("the tenant after a view closed: %v", err)
	}
	if again, err := rt.User(ctx, "user-00"); err != nil || again == views[0] {
		t.Fatalf("a closed view is served again: %v", err)
	}
}

// ViewFor decides whose view serves a principal: its user's once the user has skills of their
// own, the tenant's before that and for a principal without a name; another tenant's principal
// gets none.
func TestViewFor(t *testing.T) {
	dir := t.TempDir()
	rt := newRuntime(t, Config{Tenant: "acme", SkillDirs: []string{dir}})
	ctx := context.Background()
	alice := access.Principal{Tenant: "acme", User: "alice", Key: "alice-key", Role: access.RoleAuthor}
	for _, who := range []access.Principal{alice, {Tenant: "acme", Role: access.RoleViewer}, {Key: "ops", Role: access.RoleAdmin}} {
		if v, err := rt.ViewFor(ctx, who); err != nil || v != rt {
			t.Fatalf("%+v without skills of their own: %v, %v", who, v == rt, err)
		}
	}
	mine, err := rt.User(ctx, "alice")
	must(t, err)
	_, err = mine.Install(ctx, "notes", pkg(t, simple("notes", ""), "hello"), InstallOptions{Visibility: access.VisibilityUser, Who: alice})
	must(t, err)
	if v, err := rt.ViewFor(ctx, alice); err != nil || v != mine {
		t.Fatalf("alice with a skill of her own: %v", err)
	}
	if v, _ := rt.ViewFor(ctx, access.Principal{Tenant: "acme", User: "bob", Key: "b", Role: access.RoleRunner}); v != rt {
		t.Fatal("bob got a view of his own without skills")
	}
	if _, err := rt.ViewFor(ctx, access.Principal{Tenant: "globex", User: "alice", Key: "k", Role: access.RoleAdmin}); !errors.Is(err, access.ErrForbidden) {
		t.Fatalf("another tenant's principal: %v", err)
	}
	if _, err := mine.ViewFor(ctx, alice); err == nil {
		t.Fatal("ViewFor on a user's view")
	}
}

package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/version"
)

// FindVersions is the review queue: a tenant's versions in one status across its skills,
// newest first, a user's own ones for that user (and the tenant's admins) alone, never another
// tenant's, within its bounds.
func testFindVersions(t *testing.T, h Harness) {
	s := open(t, h, h.New(t))
	ctx := t.Context()
	files := map[string][]byte{"skill.json": []byte("x")}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	add := func(tenant, skill, user, seed string, status version.Status, at int) {
		t.Helper()
		v := newVersion(skill, seed, t0.Add(time.Duration(at)*time.Second))
		v.Status, v.User = status, user
		if _, _, err := s.Tenant(tenant).AddVersion(ctx, v, files); err != nil {
			t.Fatalf("add %s %s: %v", skill, seed, err)
		}
	}
	alice, bob := "notes@"+access.UserScope("alice"), "notes@"+access.UserScope("bob")
	add("acme", "weather", "", "w1", version.Pending, 1)
	add("acme", alice, "alice", "a1", version.Pending, 2)
	add("acme", bob, "bob", "b1", version.Pending, 3)
	add("acme", "weather", "", "w2", version.Draft, 4)
	add("acme", "clock", "", "c1", version.Pending, 5)
	add("other", "weather", "", "o1", version.Pending, 6)
	add("", "weather", "", "d1", version.Pending, 7)

	find := func(tenant string, q version.Query) []string {
		t.Helper()
		list, err := s.Tenant(tenant).FindVersions(ctx, q)
		if err != nil {
			t.Fatalf("find %+v in %q: %v", q, tenant, err)
		}
		var out []string
		for _, v := range list {
			id, _, _ := strings.Cut(v.Skill, "@")
			out = append(out, id+"/"+v.User+"/"+string(v.Status))
		}
		return out
	}
	pending := version.Query{Status: version.Pending, Limit: 10}
	if got, want := find("acme", pending), []string{"clock//pending", "notes/bob/pending", "notes/alice/pending", "weather//pending"}; !slices.Equal(got, want) {
		t.Errorf("acme's admin's queue %v, want %v", got, want)
	}
	q := pending
	q.Viewer = "alice"
	if got, want := find("acme", q), []string{"clock//pending", "notes/alice/pending", "weather//pending"}; !slices.Equal(got, want) {
		t.Errorf("alice's queue %v, want %v", got, want)
	}
	q.Viewer = "carol"
	if got, want := find("acme", q), []string{"clock//pending", "weather//pending"}; !slices.Equal(got, want) {
		t.Errorf("carol's queue %v, want %v", got, want)
	}
	if got, want := find("acme", version.Query{Status: version.Draft, Limit: 10}), []string{"weather//draft"}; !slices.Equal(got, want) {
		t.Errorf("acme's drafts %v, want %v", got, want)
	}
	if got, want := find("", pending), []string{"weather//pending"}; !slices.Equal(got, want) {
		t.Errorf("the default tenant's queue %v, want %v", got, want)
	}
	q = pending
	q.Limit = 2
	if got, want := find("acme", q), []string{"clock//pending", "notes/bob/pending"}; !slices.Equal(got, want) {
		t.Errorf("the first 2 of acme's queue: %v, want %v", got, want)
	}
	// A version keeps its stored name and its user.
	list, err := s.Tenant("acme").FindVersions(ctx, version.Query{Status: version.Pending, Viewer: "bob", Limit: 1000})
	if err != nil || len(list) != 3 || list[0].Skill != "clock" || list[1].Skill != bob || list[1].User != "bob" {
		t.Errorf("bob's queue as stored: %+v %v", list, err)
	}
	for _, bad := range []version.Query{{Status: "waiting", Limit: 1}, {Status: version.Pending}, {Status: version.Pending, Limit: version.MaxQuery + 2}} {
		if _, err := s.FindVersions(ctx, bad); err == nil {
			t.Errorf("find %+v: no error", bad)
		}
	}
}

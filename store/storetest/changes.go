package storetest

import (
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/version"
)

// The feed of changes gives every version of the tenant, then only what changed after the last
// change read, in order, paged, never another tenant's; each version's events say who did what
// when, the publish that deprecated it included.
func testVersionChanges(t *testing.T, h Harness) {
	addr := h.New(t)
	s := open(t, h, addr)
	ctx := t.Context()
	feed, ok := s.(version.Feed)
	if !ok {
		t.Fatal("the store is not a version.Feed")
	}
	files := map[string][]byte{"skill.json": []byte(`{}`)}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	add := func(s store.Store, v version.Version) version.Version {
		t.Helper()
		got, _, err := s.AddVersion(ctx, v, files)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	a1 := add(s, newVersion("a", "a1", t0))
	a2 := add(s, newVersion("a", "a2", t0.Add(time.Second)))
	b1 := add(s, newVersion("b", "b1", t0.Add(2*time.Second)))
	other := s.Tenant("other")
	add(other, newVersion("a", "other", t0))
	feedOf := func(f version.Feed, since int64, limit int) ([]version.Version, int64) {
		t.Helper()
		vs, last, err := f.Changes(ctx, since, limit)
		if err != nil {
			t.Fatal(err)
		}
		return vs, last
	}
	digests := func(vs []version.Version) (out []string) {
		for _, v := range vs {
			out = append(out, v.Skill+"/"+string(v.Status)+"/"+v.Digest[len(v.Digest)-4:])
		}
		return out
	}
	all, last := feedOf(feed, 0, 100)
	if len(all) != 3 || all[0].Digest != a1.Digest || all[1].Digest != a2.Digest || all[2].Digest != b1.Digest {
		t.Fatalf("every version: %v", digests(all))
	}
	page, next := feedOf(feed, 0, 2)
	rest, last2 := feedOf(feed, next, 2)
	if len(page) != 2 || len(rest) != 1 || rest[0].Digest != b1.Digest || last2 != last {
		t.Fatalf("paged: %v then %v (%d, %d)", digests(page), digests(rest), last2, last)
	}
	if none, same := feedOf(feed, last, 100); len(none) != 0 || same != last {
		t.Fatalf("nothing changed, yet %v (%d -> %d)", digests(none), last, same)
	}
	at := t0.Add(time.Hour)
	for _, d := range []string{a1.Digest, a2.Digest} {
		if _, err := s.SetVersionStatus(ctx, "a", d, version.Transitions["publish"], "bob", "ship it", at); err != nil {
			t.Fatal(err)
		}
	}
	changed, _ := feedOf(feed, last, 100)
	want := []string{"a/active/" + a1.Digest[len(a1.Digest)-4:], "a/deprecated/" + a1.Digest[len(a1.Digest)-4:], "a/active/" + a2.Digest[len(a2.Digest)-4:]}
	if got := digests(changed); len(got) != 3 || got[1] != want[1] || got[2] != want[2] {
		// a1 comes first as it is now (deprecated): a change is read as the version stands.
		t.Fatalf("after two publishes: %v, want a1 then a1 deprecated then a2 active", got)
	}
	if changed[len(changed)-1].Status != version.Active {
		t.Fatalf("the last change reads %+v", changed[len(changed)-1])
	}
	if vs, _ := feedOf(other.(version.Feed), 0, 100); len(vs) != 1 || vs[0].Skill != "a" {
		t.Fatalf("the other tenant's feed: %v", digests(vs))
	}
	events, err := feed.Events(ctx, "a", a1.Digest, 100)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		action string
		status version.Status
		by     string
	}
	wantEv := []ev{{"record", version.Draft, "alice"}, {"publish", version.Active, "bob"}, {"deprecate", version.Deprecated, "bob"}}
	if len(events) != len(wantEv) {
		t.Fatalf("events of a1: %+v", events)
	}
	for i, e := range events {
		if (ev{e.Action, e.Status, e.By}) != wantEv[i] || (i > 0 && !e.At.Equal(at)) || (i > 0 && e.Seq <= events[i-1].Seq) {
			t.Fatalf("event %d of a1: %+v, want %+v", i, e, wantEv[i])
		}
	}
	if events[1].Note != "ship it" || events[2].Note == "" {
		t.Fatalf("notes: %q, %q", events[1].Note, events[2].Note)
	}
	// The audit trail survives a restart, and keeps every move's note, not just the last.
	s2 := open(t, h, addr)
	again, err := s2.(version.Feed).Events(ctx, "a", a1.Digest, 100)
	if err != nil || len(again) != 3 || again[1].Note != "ship it" {
		t.Fatalf("after a restart: %+v, %v", again, err)
	}
}

package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/store"
)

// A run of a user's own skill is visible to that user alone: a query with a Viewer lists the
// tenant's runs and the viewer's own, never another user's; one without lists every run. A
// user's own skill's versions are filed under its id and the user's scope, apart from the
// tenant's skill of the same id. A run's files are seen as the run is.
func testVisibility(t *testing.T, h Harness) {
	s := open(t, h, h.New(t)).Tenant("acme")
	ctx := t.Context()
	for i, to := range []string{"", "alice@acme", "bob@acme", "alice@acme"} {
		r := finished(i+1, "notes", store.StatusSucceeded)
		r.Tenant, r.VisibleTo = "acme", to
		mustFinish(t, s, r)
	}
	ids := func(q store.Query) []string {
		t.Helper()
		page, err := s.ListRuns(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range page.Runs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(store.Query{Viewer: "alice@acme"}); !slices.Equal(got, []string{"run_000004", "run_000002", "run_000001"}) {
		t.Errorf("alice's view: %v", got)
	}
	if got := ids(store.Query{Viewer: "bob@acme", Skill: "notes"}); !slices.Equal(got, []string{"run_000003", "run_000001"}) {
		t.Errorf("bob's view: %v", got)
	}
	if got := ids(store.Query{}); len(got) != 4 {
		t.Errorf("the whole tenant's view: %v", got)
	}
	// Paged: the cursor keeps the viewer's filter.
	page, err := s.ListRuns(ctx, store.Query{Viewer: "alice@acme", Limit: 1})
	if err != nil || page.Next == "" {
		t.Fatalf("first page: %+v %v", page, err)
	}
	if got := ids(store.Query{Viewer: "alice@acme", Limit: 5, Cursor: page.Next}); !slices.Equal(got, []string{"run_000002", "run_000001"}) {
		t.Errorf("alice's second page: %v", got)
	}
	if r, err := s.FindRun(ctx, "run_000003"); err != nil || r.VisibleTo != "bob@acme" {
		t.Errorf("FindRun keeps VisibleTo: %+v %v", r, err)
	}

	// A run's files are seen as the run is: by its viewer, the tenant's runs' by everyone, and
	// files of a run the store holds no record of by no viewer (only by a query without one).
	for _, id := range []string{"run_000001", "run_000002", "run_orphan"} {
		if err := s.PutArtifacts(ctx, id, []artifact.File{fileOf("out.txt", "text/plain", []byte(id))}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		viewer, run string
		sees        bool
	}{
		{"alice@acme", "run_000002", true}, {"bob@acme", "run_000002", false}, {"", "run_000002", true},
		{"bob@acme", "run_000001", true}, {"alice@acme", "run_orphan", false}, {"", "run_orphan", true},
	} {
		rc, _, err := s.OpenArtifact(ctx, c.viewer, c.run, "out.txt")
		switch {
		case c.sees && err != nil:
			t.Errorf("%q opening %s's file: %v", c.viewer, c.run, err)
		case !c.sees && !errors.Is(err, artifact.ErrNoRun):
			t.Errorf("%q opening %s's file: %v, want ErrNoRun", c.viewer, c.run, err)
		}
		if rc != nil {
			rc.Close()
		}
	}
	if _, _, err := s.OpenArtifact(ctx, "alice@acme", "run_000002", "nosuch"); !errors.Is(err, artifact.ErrNoArtifact) {
		t.Errorf("a file alice's run did not leave: %v, want ErrNoArtifact", err)
	}

	scoped := "notes@" + access.UserScope("alice@acme")
	files := map[string][]byte{"skill.json": []byte("x")}
	mine := newVersion(scoped, "v", time.Unix(1_700_000_000, 0))
	mine.User = "alice@acme"
	if got, _, err := s.AddVersion(ctx, mine, files); err != nil || got.User != "alice@acme" {
		t.Fatalf("a user's version: %+v %v", got, err)
	}
	// A version names the user of its scope, and a tenant's names none.
	for _, bad := range []struct{ skill, user string }{{scoped, ""}, {scoped, "bob@acme"}, {"notes", "alice@acme"}} {
		v := newVersion(bad.skill, "w", time.Unix(1_700_000_000, 0))
		v.User = bad.user
		if _, _, err := s.AddVersion(ctx, v, files); err == nil || !strings.Contains(err.Error(), "is not whose skill it is") {
			t.Errorf("%s of user %q: %v, want refused", bad.skill, bad.user, err)
		}
	}
	if _, _, err := s.AddVersion(ctx, newVersion("notes@NOTASCOPE", "v", time.Unix(1_700_000_000, 0)), files); err == nil {
		t.Fatal("a version under a malformed scope was stored")
	}
	if list, _ := s.Versions(ctx, "notes"); len(list) != 0 {
		t.Fatalf("a user's version is listed as the tenant's: %+v", list)
	}
	if list, _ := s.Versions(ctx, scoped); len(list) != 1 {
		t.Fatalf("the user's versions: %+v", list)
	}
}

package store_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// newRuntime is a runtime over the first-party skills that records into a fresh SQLite store.
func newRuntime(t *testing.T, pol *policy.Policy) (*runtime.Runtime, store.Store, *store.Recorder) {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{})
	// The compilation cache the other packages' tests share: hello and word-count are Go-built
	// modules, a minute or more to compile under -race on a busy machine, once.
	rt, err := runtime.New(t.Context(), runtime.Config{SkillDirs: []string{"../skills"}, Policy: pol, NoBackgroundCheck: true, Recorder: rec, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testcache.Dir()})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt, s, rec
}

// Every admitted run is in the store, whole, with its face and caller; arguments only when the
// policy keeps them, their digest always.
func TestRecorderRecordsRuns(t *testing.T) {
	for _, keep := range []bool{false, true} {
		rt, s, rec := newRuntime(t, &policy.Policy{Runs: policy.Runs{RecordArguments: keep}})
		ctx := t.Context()
		ok, err := rt.Run(ctx, run.Request{Skill: "hello", Args: json.RawMessage(`{"name":"Ada"}`), Face: run.FaceHTTP, Who: access.Local("key-ci")})
		if err != nil {
			t.Fatal(err)
		}
		second, err := rt.Run(ctx, run.Request{Skill: "word-count", Args: json.RawMessage(`{"text":"a b"}`), Face: run.FaceMCP, Who: access.Local("test")})
		if err != nil {
			t.Fatal(err)
		}
		// Refused before admission: not a run, not recorded (the in-memory history agrees).
		refused, _ := rt.Run(ctx, run.Request{Skill: "word-count", Args: json.RawMessage(`{"top":5}`), Who: access.Local("test")})
		if err := rec.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		page, err := s.ListRuns(ctx, store.Query{})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]store.Run{}
		for _, r := range page.Runs {
			byID[r.ID] = r
		}
		got := byID[ok.RunID]
		if got.Status != store.StatusSucceeded || got.Face != "http" || got.Caller != "key-ci" || got.Skill != "hello" ||
			got.Digest != ok.Digest || got.Version != "1.0.0" || got.Usage == nil || got.FinishedAt.IsZero() || got.Owner != "" {
			t.Errorf("keep=%v: the successful run reads %+v", keep, got)
		}
		if got.ArgsSHA256 == "" || (keep && string(got.Args) != `{"name":"Ada"}`) || (!keep && got.Args != nil) {
			t.Errorf("keep=%v: args %s, digest %q", keep, got.Args, got.ArgsSHA256)
		}
		if r := byID[second.RunID]; r.Face != "mcp" || r.Status != store.StatusSucceeded {
			t.Errorf("keep=%v: the MCP run reads %+v", keep, r)
		}
		if _, found := byID[refused.RunID]; found || len(page.Runs) != 2 {
			t.Errorf("keep=%v: %d runs recorded, the refused one too: %v", keep, len(page.Runs), found)
		}
		// A store run reads back in the shape GET /v1/runs/{id} gave from memory.
		mem, _ := rt.RunRecord(access.Principal{Key: "ops", Role: access.RoleAdmin}, ok.RunID)
		if (mem.Args != nil) != keep || mem.ArgsSHA256 != got.ArgsSHA256 {
			t.Errorf("keep=%v: the in-memory record's args %s / %s", keep, mem.Args, mem.ArgsSHA256)
		}
		t.Logf("keep=%v: %d runs recorded", keep, len(page.Runs))
	}
}

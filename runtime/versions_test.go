package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/policy"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/version"
)

// editManifest rewrites dir/skill.json with edit applied.
func editManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "skill.json"))
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(raw, &m))
	edit(m)
	raw, _ = json.Marshal(m)
	must(t, os.WriteFile(filepath.Join(dir, "skill.json"), raw, 0o644))
}

func setTimeout(ms int) func(m map[string]any) {
	return func(m map[string]any) { m["limits"] = map[string]any{"timeoutMs": ms, "memoryMiB": 64} }
}

// runWC runs word-count (pinned to pin when set) and returns its result and error.
func runWC(t *testing.T, rt *Runtime, pin string) (*run.Result, error) {
	t.Helper()
	return rt.Run(context.Background(), run.Request{Skill: "word-count", Digest: pin, Args: json.RawMessage(`{"text":"a b c"}`), Who: testAdmin})
}

// The life of a skill's versions, through a folder being edited: a wider version waits for an
// admin, the active version keeps serving, a pin runs what it names, and the state machine's
// roles hold.
func TestVersionsLifecycle(t *testing.T) {
	ctx := context.Background()
	skills := bundledSkill(t, "word-count", setTimeout(10_000))
	dir := filepath.Join(skills, "word-count")
	rt := newRuntime(t, Config{SkillDirs: []string{skills}, Versions: newVersionStore(t)})
	admin := access.Principal{Key: "ops", Role: access.RoleAdmin}

	res, err := runWC(t, rt, "")
	if err != nil {
		t.Fatal(err)
	}
	v1 := res.Digest
	list, err := rt.Versions(ctx, "word-count")
	must(t, err)
	if len(list) != 1 || list[0].Digest != v1 || list[0].Status != version.Draft || list[0].Source != "folder" {
		t.Fatalf("after the first run: %+v", list)
	}

	// Never published, the skill is still being written: a wider edit is a draft, and runs.
	editManifest(t, dir, setTimeout(15_000))
	must(t, rt.Reload(ctx))
	res, err = runWC(t, rt, "")
	if err != nil || res.Digest == v1 {
		t.Fatalf("a wider edit of a never-published skill: %v %+v", err, res)
	}
	if v, _ := rt.SkillVersion(ctx, "word-count", res.Digest); v.Status != version.Draft || len(v.Diff) != 0 {
		t.Fatalf("the wider draft: %+v", v)
	}

	// Published, the first version serves by id from the store, though the folder moved on.
	if _, err := rt.ChangeVersion(ctx, access.Principal{Key: "dev", Role: access.RoleAuthor}, "word-count", v1, "publish", ""); !errors.Is(err, access.ErrForbidden) {
		t.Fatalf("an author published: %v", err)
	}
	if _, err := rt.ChangeVersion(ctx, access.Principal{Key: "rel", Role: access.RolePublisher}, "word-count", v1, "publish", ""); err != nil {
		t.Fatal(err)
	}
	if res, err := runWC(t, rt, ""); err != nil || res.Digest != v1 {
		t.Fatalf("by id with v1 active: %v %+v", err, res)
	}

	// Now a longer timeout than the active version's is a widening: pending; the active version
	// keeps serving by id, and a pin of the pending one is refused with the diff.
	editManifest(t, dir, setTimeout(20_000))
	must(t, rt.Reload(ctx))
	if res, err := runWC(t, rt, ""); err != nil || res.Digest != v1 {
		t.Fatalf("by id while a wider version is pending: %v %+v", err, res)
	}
	list, _ = rt.Versions(ctx, "word-count")
	v2 := list[0]
	if v2.Status != version.Pending || len(v2.Diff) != 1 || v2.Diff[0] != "limits.timeoutMs: 10000 -> 20000" {
		t.Fatalf("the wider version: %+v", v2)
	}
	if _, err := runWC(t, rt, v2.Digest); !errors.Is(err, run.ErrPendingApproval) || !strings.Contains(err.Error(), "limits.timeoutMs: 10000 -> 20000") {
		t.Fatalf("a run of a pending version: %v", err)
	}

	// Approval: never by an agent, never twice.
	if _, err := rt.ChangeVersion(ctx, access.Principal{Key: "bot", Role: access.RoleAdmin, Agent: true}, "word-count", v2.Digest, "approve", ""); !errors.Is(err, access.ErrForbidden) {
		t.Fatalf("an agent approved: %v", err)
	}
	if _, err := rt.ChangeVersion(ctx, admin, "word-count", v2.Digest[:20], "approve", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ChangeVersion(ctx, admin, "word-count", v2.Digest, "approve", ""); !errors.Is(err, version.ErrConflict) || !strings.Contains(err.Error(), "it is draft") {
		t.Fatalf("approved twice: %v", err)
	}
	// Approved is a draft: the active version still serves by id; a pin runs the draft.
	if res, _ := runWC(t, rt, ""); res.Digest != v1 {
		t.Fatalf("by id after approval ran %s", res.Digest)
	}
	if res, err := runWC(t, rt, v2.Digest); err != nil || res.Digest != v2.Digest {
		t.Fatalf("pinned to the approved draft: %v %+v", err, res)
	}

	// Publishing it deprecates the first; yanking the first stops even its pins.
	if _, err := rt.ChangeVersion(ctx, admin, "word-count", v2.Digest, "publish", ""); err != nil {
		t.Fatal(err)
	}
	if res, _ := runWC(t, rt, ""); res.Digest != v2.Digest {
		t.Fatalf("by id after the second publish ran %s", res.Digest)
	}
	old, err := rt.SkillVersion(ctx, "word-count", v1)
	if err != nil || old.Status != version.Deprecated {
		t.Fatalf("the first version after the second publish: %+v %v", old, err)
	}
	if _, err := runWC(t, rt, v1); err != nil {
		t.Fatalf("a deprecated version pinned: %v", err)
	}
	if _, err := rt.ChangeVersion(ctx, admin, "word-count", v1, "yank", "broken output"); err != nil {
		t.Fatal(err)
	}
	if _, err := runWC(t, rt, v1); !errors.Is(err, run.ErrNotFound) || !strings.Contains(err.Error(), "yanked") {
		t.Fatalf("a yanked version pinned: %v", err)
	}
	if _, err := runWC(t, rt, "sha256:0123456789"); !errors.Is(err, run.ErrNotFound) {
		t.Fatalf("a pin of no version: %v", err)
	}
}

// A narrower or equal version is a draft; under versions.requirePublished, only published
// versions run.
func TestVersionsRequirePublished(t *testing.T) {
	ctx := context.Background()
	skills := bundledSkill(t, "word-count", setTimeout(10_000))
	p := &policy.Policy{Versions: policy.Versions{RequirePublished: true}}
	rt := newRuntime(t, Config{SkillDirs: []string{skills}, Policy: p, Versions: newVersionStore(t)})
	_, err := runWC(t, rt, "")
	if !errors.Is(err, run.ErrNotFound) || !strings.Contains(err.Error(), "requirePublished") {
		t.Fatalf("an unpublished skill ran: %v", err)
	}
	list, err := rt.Versions(ctx, "word-count")
	must(t, err)
	if _, err := runWC(t, rt, list[0].Digest); err == nil {
		t.Fatal("a draft ran pinned under requirePublished")
	}
	if _, err := rt.ChangeVersion(ctx, access.Principal{Key: "rel", Role: access.RolePublisher}, "word-count", list[0].Digest, "publish", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := runWC(t, rt, ""); err != nil {
		t.Fatal(err)
	}
	// A shorter timeout is narrower: a draft, not pending.
	editManifest(t, filepath.Join(skills, "word-count"), setTimeout(5_000))
	must(t, rt.Reload(ctx))
	list, _ = rt.Versions(ctx, "word-count")
	if list[0].Status != version.Draft || len(list[0].Diff) != 0 {
		t.Fatalf("a narrower version: %+v", list[0])
	}
}

package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/internal/testcache"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/version"
)

// The runtime's versions over the real SQLite store, across a restart: an upload that asks for
// more waits for an admin while the published version keeps serving from the store's copy, and a
// new process over the same database serves the same version though the folder moved on.
func TestVersionsOverSQLite(t *testing.T) {
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), sqlite.FileName)
	skills := t.TempDir()
	src := filepath.Join("..", "skills", "word-count")
	files := map[string][]byte{}
	for _, name := range []string{"skill.json", "execute.wasm", "SKILL.md"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	start := func() *runtime.Runtime {
		s, err := sqlite.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		// The compilation cache the other packages' tests share: word-count is a Go-built module,
		// a minute or more to compile under -race on a busy machine, once.
		rt, err := runtime.New(ctx, runtime.Config{SkillDirs: []string{skills}, NoBackgroundCheck: true, Versions: s, Shared: testengine.Shared(t, runtime.SharedConfig{CacheDir: testcache.Dir()})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(context.Background()) })
		return rt
	}
	runOne := func(rt *runtime.Runtime) (*run.Result, error) {
		return rt.Run(ctx, run.Request{Skill: "word-count", Args: json.RawMessage(`{"text":"one two"}`), Who: access.Local("test")})
	}
	rt := start()
	if _, err := rt.Install(ctx, "word-count", files, runtime.InstallOptions{Who: access.Local("alice")}); err != nil {
		t.Fatal(err)
	}
	list, err := rt.Versions(ctx, "word-count")
	if err != nil || len(list) != 1 || list[0].Source != "upload" || list[0].CreatedBy != "alice" {
		t.Fatalf("after the upload: %+v %v", list, err)
	}
	v1 := list[0].Digest
	if _, err := rt.ChangeVersion(ctx, access.Principal{Key: "rel", Role: access.RolePublisher}, "word-count", v1, "publish", ""); err != nil {
		t.Fatal(err)
	}

	// The update asks for a longer timeout: pending, with the diff; v1 keeps serving.
	var m map[string]any
	if err := json.Unmarshal(files["skill.json"], &m); err != nil {
		t.Fatal(err)
	}
	m["limits"] = map[string]any{"timeoutMs": 25_000, "memoryMiB": 64}
	files["skill.json"], _ = json.Marshal(m)
	if _, err := rt.Install(ctx, "word-count", files, runtime.InstallOptions{Replace: true, Who: access.Local("alice")}); err != nil {
		t.Fatal(err)
	}
	list, _ = rt.Versions(ctx, "word-count")
	if list[0].Status != version.Pending || !strings.Contains(strings.Join(list[0].Diff, ";"), "limits.timeoutMs") {
		t.Fatalf("the wider update: %+v", list[0])
	}
	if res, err := runOne(rt); err != nil || res.Digest != v1 {
		t.Fatalf("by id while the update is pending: %v %+v", err, res)
	}

	// A new process over the same database: the same answer, from the store's copy.
	rt.Close(ctx)
	rt = start()
	if res, err := runOne(rt); err != nil || res.Digest != v1 {
		t.Fatalf("after a restart: %v %+v", err, res)
	}
	if _, err := rt.ChangeVersion(ctx, access.Principal{Key: "rel", Role: access.RolePublisher}, "word-count", v1, "yank", "bad"); err != nil {
		t.Fatal(err)
	}
	if _, err := runOne(rt); !errors.Is(err, run.ErrPendingApproval) {
		t.Fatalf("with v1 yanked and v2 pending: %v", err)
	}
	if _, err := rt.ChangeVersion(ctx, access.Principal{Key: "ops", Role: access.RoleAdmin}, "word-count", list[0].Digest, "approve", ""); err != nil {
		t.Fatal(err)
	}
	if res, err := runOne(rt); err != nil || res.Digest != list[0].Digest {
		t.Fatalf("after approval: %v %+v", err, res)
	}
}

package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
)

func pkg(t *testing.T, manifest, wasm string) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", wasm+".wasm"))
	must(t, err)
	return map[string][]byte{"skill.json": []byte(manifest), spec.ModuleFile: data}
}

func TestInstallUpdateRemove(t *testing.T) {
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx := context.Background()

	s, err := rt.Install(ctx, "greet", pkg(t, simple("greet", `"version":"1"`), "hello"), InstallOptions{Who: testAdmin})
	if err != nil || s.Version() != "1" {
		t.Fatalf("create: %v", err)
	}
	if _, err := rt.Install(ctx, "greet", pkg(t, simple("greet", ""), "hello"), InstallOptions{Who: testAdmin}); !errors.Is(err, ErrExists) {
		t.Fatalf("create over an existing skill: %v", err)
	}
	if _, err := rt.Install(ctx, "nope", pkg(t, simple("nope", ""), "hello"), InstallOptions{Replace: true, MustExist: true, Who: testAdmin}); !errors.Is(err, run.ErrNotFound) {
		t.Fatalf("update of a missing skill: %v", err)
	}

	// A broken update changes nothing: not the files, not the registry, and runs still work.
	before, _ := os.ReadFile(filepath.Join(dir, "greet", "skill.json"))
	bad := pkg(t, `{"id":"greet","name":"g","descripton":"typo"}`, "hello")
	if _, err := rt.Install(ctx, "greet", bad, InstallOptions{Replace: true, Who: testAdmin}); !errors.Is(err, spec.ErrInvalidSkill) ||
		!strings.Contains(err.Error(), `did you mean "description"`) {
		t.Fatalf("broken update: %v", err)
	}
	noexport := pkg(t, simple("greet", ""), "noexport")
	if _, err := rt.Install(ctx, "greet", noexport, InstallOptions{Replace: true, Who: testAdmin}); !errors.Is(err, spec.ErrInvalidSkill) ||
		!strings.Contains(err.Error(), `does not export the entrypoint "execute"`) {
		t.Fatalf("update without the export: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "greet", "skill.json"))
	if string(before) != string(after) {
		t.Fatalf("a failed update changed the files")
	}
	if res, err := rt.Run(ctx, run.Request{Skill: "greet", Who: testAdmin}); err != nil || res.Version != "1" {
		t.Fatalf("run after failed updates: %v %+v", err, res)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}

	// Paths a package may not hold, all reported at once.
	evil := pkg(t, simple("evil", ""), "hello")
	evil["../escape"] = []byte("x")
	evil["src/main.go"] = []byte("x")
	evil["resources/.hidden"] = []byte("x")
	_, err = rt.Install(ctx, "evil", evil, InstallOptions{Who: testAdmin})
	var se *spec.SkillError
	if !errors.As(err, &se) || len(se.Problems) != 3 {
		t.Fatalf("evil package: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); err == nil {
		t.Fatal("a package wrote outside the skills directory")
	}

	// Update: the new version serves new runs.
	if s, err := rt.Install(ctx, "greet", pkg(t, simple("greet", `"version":"2","parameters":{"type":"object"}`), "echo"), InstallOptions{Replace: true, MustExist: true, Who: testAdmin}); err != nil || s.Version() != "2" {
		t.Fatalf("update: %v", err)
	}
	if res, err := rt.Run(ctx, run.Request{Skill: "greet", Args: []byte(`{"a":1}`), Who: testAdmin}); err != nil || string(res.Result) != `{"a":1}` {
		t.Fatalf("run after update: %v %s", err, res.Result)
	}
	if err := rt.Remove(ctx, testAdmin, "greet"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Run(ctx, run.Request{Skill: "greet", Who: testAdmin}); !errors.Is(err, run.ErrNotFound) {
		t.Fatalf("run after remove: %v", err)
	}
	if err := rt.Remove(ctx, testAdmin, "greet"); !errors.Is(err, run.ErrNotFound) {
		t.Fatalf("second remove: %v", err)
	}
}

// The runtime decides who may install and remove, whatever the face: an install needs an author,
// a removal an admin, and a call that names no principal is refused, saying so. A refused call
// changes nothing.
func TestInstallAndRemoveNeedTheirRoles(t *testing.T) {
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx := context.Background()
	runner := access.Principal{Key: "ci", Role: access.RoleRunner}
	author := access.Principal{User: "ada", Key: "ada-laptop", Role: access.RoleAuthor}
	files := pkg(t, simple("greet", ""), "hello")

	for _, who := range []access.Principal{runner, {}} {
		if _, err := rt.Install(ctx, "greet", files, InstallOptions{Who: who}); !errors.Is(err, access.ErrForbidden) || !strings.Contains(err.Error(), `installing skill "greet" needs the author role`) {
			t.Fatalf("install by %+v: %v", who, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "greet")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused install wrote the skill: %v", err)
	}
	if _, err := rt.Install(ctx, "greet", files, InstallOptions{Who: author}); err != nil {
		t.Fatalf("install by an author: %v", err)
	}
	if err := rt.Remove(ctx, author, "greet"); !errors.Is(err, access.ErrForbidden) || !strings.Contains(err.Error(), `"ada" has author`) {
		t.Fatalf("remove by an author: %v", err)
	}
	if _, err := rt.Skill("greet"); err != nil {
		t.Fatalf("a refused removal removed the skill: %v", err)
	}
	if err := rt.Remove(ctx, testAdmin, "greet"); err != nil {
		t.Fatalf("remove by an admin: %v", err)
	}
}

// Updates under concurrent runs: every run finishes, on one version or the other, never broken.
func TestUpdateUnderConcurrentRuns(t *testing.T) {
	dir := t.TempDir()
	rt := newRuntime(t, Config{SkillDirs: []string{dir}})
	ctx := context.Background()
	if _, err := rt.Install(ctx, "s", pkg(t, simple("s", `"version":"1"`), "hello"), InstallOptions{Who: testAdmin}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := rt.Run(ctx, run.Request{Skill: "s", Who: testAdmin}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < 10; i++ {
		if _, err := rt.Install(ctx, "s", pkg(t, simple("s", `"version":"2"`), "hello"), InstallOptions{Replace: true, Who: testAdmin}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

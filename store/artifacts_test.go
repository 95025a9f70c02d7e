package store_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/access"
	"github.com/skillbox-dev/skillbox/artifact"
	"github.com/skillbox-dev/skillbox/internal/testengine"
	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/runtime"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/store"
	"github.com/skillbox-dev/skillbox/store/sqlite"
	"github.com/skillbox-dev/skillbox/store/storetest"
)

// A runtime whose Recorder is also its artifact.Store keeps each run's files in the store, within
// the recorder's quota: a run whose files would pass it fails as quota_exceeded, recorded so,
// with nothing kept; the store serves the others' bytes to the runtime's OpenArtifact.
func TestRunArtifactsInTheStore(t *testing.T) {
	skills := outSkill(t)
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName))
	must(t, err)
	t.Cleanup(func() { s.Close() })
	rec := storetest.NewRecorder(t, s, store.RecorderOptions{MaxArtifactBytes: 10})
	rt, err := runtime.New(t.Context(), runtime.Config{SkillDirs: []string{skills}, NoBackgroundCheck: true, Recorder: rec, Artifacts: rec, Shared: testengine.Shared(t, runtime.SharedConfig{NoCache: true})})
	must(t, err)
	t.Cleanup(func() { rt.Close(context.Background()) })
	ctx := t.Context()

	ok, err := rt.Run(ctx, run.Request{Skill: "out", Args: []byte(`{"spec":"a.txt*6"}`), Who: access.Local("test")})
	if err != nil || len(ok.Artifacts) != 1 {
		t.Fatalf("%+v %v", ok, err)
	}
	rc, a, err := rt.OpenArtifact(ctx, access.Local("test"), ok.RunID, "a.txt")
	must(t, err)
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != "xxxxxx" || a != ok.Artifacts[0] {
		t.Errorf("a.txt reads %q, %+v", data, a)
	}

	over, err := rt.Run(ctx, run.Request{Skill: "out", Args: []byte(`{"spec":"b.txt*5"}`), Who: access.Local("test")})
	if !errors.Is(err, run.ErrQuotaExceeded) || over.Error == nil || over.Error.Kind != run.KindQuotaExceeded || len(over.Artifacts) != 0 {
		t.Fatalf("past the quota: %+v, %v", over, err)
	}
	must(t, rec.Flush(ctx))
	found, err := s.FindRun(ctx, over.RunID)
	if err != nil || found.Status != store.StatusFailed || found.Error == nil || found.Error.Kind != "quota_exceeded" {
		t.Errorf("recorded as %+v, %v", found, err)
	}
	if _, _, err := rt.OpenArtifact(ctx, access.Local("test"), over.RunID, "b.txt"); !errors.Is(err, artifact.ErrNoArtifact) {
		t.Errorf("the refused run's file: %v, want ErrNoArtifact (the run is recorded)", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// outSkill is a skills directory holding "out", which writes the files its spec names
// (testdata/wat/output.wat) to /output.
func outSkill(t *testing.T) string {
	t.Helper()
	skills := t.TempDir()
	sd := filepath.Join(skills, "out")
	must(t, os.MkdirAll(sd, 0o755))
	must(t, os.WriteFile(filepath.Join(sd, "skill.json"), []byte(`{"id":"out","name":"out","description":"writes files",
		"parameters":{"spec":{"type":"string","required":true}},"permissions":{"files":[{"path":"/output","access":"read-write"}]}}`), 0o644))
	wasm, err := os.ReadFile("../testdata/wasm/output.wasm")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(sd, spec.ModuleFile), wasm, 0o644))
	return skills
}

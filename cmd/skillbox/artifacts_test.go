package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/run"
	"github.com/skillbox-dev/skillbox/spec"
	"github.com/skillbox-dev/skillbox/store/sqlite"
)

// skillbox run keeps a run's artifacts in the store it records the run in, so a server over the
// same data directory serves them later.
func TestRunKeepsArtifactsInTheStore(t *testing.T) {
	t.Parallel()
	skills := t.TempDir()
	sd := filepath.Join(skills, "out")
	must(t, os.MkdirAll(sd, 0o755))
	must(t, os.WriteFile(filepath.Join(sd, "skill.json"), []byte(`{"id":"out","name":"out","description":"writes files",
		"parameters":{"spec":{"type":"string","required":true}},"permissions":{"files":[{"path":"/output","access":"read-write"}]}}`), 0o644))
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "output.wasm"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(sd, spec.ModuleFile), wasm, 0o644))
	dir := filepath.Join(t.TempDir(), "data")
	r := cli(t, "", "--skills", skills, "run", "out", "--json", "--data-dir", dir, "--args", `{"spec":"r.txt*4"}`)
	var res run.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Artifacts) != 1 {
		t.Fatalf("run: %v %q: %v", r.code, r.stdout, err)
	}
	rc, _, err := openDB(t, filepath.Join(dir, sqlite.FileName)).OpenArtifact(t.Context(), "", res.RunID, "r.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if data, _ := io.ReadAll(rc); string(data) != "xxxx" {
		t.Errorf("r.txt in the store: %q", data)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

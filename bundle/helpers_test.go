package bundle_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillbox-dev/skillbox/spec"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// simple returns a minimal valid manifest for id with extra JSON fields spliced in.
func simple(id, extra string) string {
	m := `{"id":"` + id + `","name":"` + id + `","description":"test skill ` + id + `"`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}

// fixture writes a skill package named id into dir: manifest as given, and the module
// testdata/wasm/<wasm>.wasm.
func fixture(t testing.TB, dir, id, manifest, wasm string) string {
	t.Helper()
	sd := filepath.Join(dir, id)
	must(t, os.MkdirAll(sd, 0o755))
	must(t, os.WriteFile(filepath.Join(sd, "skill.json"), []byte(manifest), 0o644))
	data, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", wasm+".wasm"))
	if err != nil {
		t.Fatalf("fixture %s: %v (run make fixtures)", wasm, err)
	}
	must(t, os.WriteFile(filepath.Join(sd, spec.ModuleFile), data, 0o644))
	return sd
}
